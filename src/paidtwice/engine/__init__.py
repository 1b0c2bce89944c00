"""The engine: restate-server provisioning and process, a cluster of them, the agents' fork server, and
clients for the server's admin, ingress and SQL."""

from paidtwice.engine._admin import AdminCall, AdminClient, Deployment
from paidtwice.engine._cluster import (
    MAX_NODES,
    ClusterNode,
    ClusterSqlClient,
    PartitionLeader,
    RestateCluster,
    check_size,
)
from paidtwice.engine._forkserver import ForkRefused, ForkServer
from paidtwice.engine._ingress import IngressClient, Refused
from paidtwice.engine._janitor import forget, remove_at_exit
from paidtwice.engine._ports import HOST, PortLease, lease_port, wait_port_free
from paidtwice.engine._process import Process, port_is_listening, wait_until
from paidtwice.engine._provision import (
    cache_root,
    ensure_node_binary,
    ensure_restatectl,
    ensure_server_binary,
)
from paidtwice.engine._quiet import group_quiet
from paidtwice.engine._server import RestateServer
from paidtwice.engine._sql import (
    FailureEvent,
    InvocationRow,
    InvocationStatus,
    JournalEntry,
    QueryFailed,
    SqlClient,
    epoch,
    invocation_status,
    journal_from_rows,
)
from paidtwice.engine._startup import (
    LOAD_TIMEOUT,
    env_seconds,
    group_cpu_seconds,
    load_timeout,
    loaded_in,
    too_slow,
    wait_for_load,
)

__all__ = [
    "HOST",
    "LOAD_TIMEOUT",
    "MAX_NODES",
    "AdminCall",
    "AdminClient",
    "ClusterNode",
    "ClusterSqlClient",
    "Deployment",
    "FailureEvent",
    "ForkRefused",
    "ForkServer",
    "IngressClient",
    "InvocationRow",
    "InvocationStatus",
    "JournalEntry",
    "PartitionLeader",
    "PortLease",
    "Process",
    "QueryFailed",
    "Refused",
    "RestateCluster",
    "RestateServer",
    "SqlClient",
    "cache_root",
    "check_size",
    "ensure_node_binary",
    "ensure_restatectl",
    "ensure_server_binary",
    "env_seconds",
    "epoch",
    "forget",
    "group_cpu_seconds",
    "group_quiet",
    "invocation_status",
    "journal_from_rows",
    "lease_port",
    "load_timeout",
    "loaded_in",
    "port_is_listening",
    "remove_at_exit",
    "too_slow",
    "wait_for_load",
    "wait_port_free",
    "wait_until",
]
