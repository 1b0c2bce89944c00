"""The engine: restate-server provisioning and process, a cluster of them, the agents' fork server, and
clients for the server's admin, ingress and SQL."""

from paidtwice.engine._admin import AdminCall, AdminClient, Deployment
from paidtwice.engine._cluster import ClusterNode, ClusterSqlClient, PartitionLeader, RestateCluster
from paidtwice.engine._forkserver import ForkServer
from paidtwice.engine._ingress import IngressClient
from paidtwice.engine._ports import HOST, PortLease, lease_port
from paidtwice.engine._process import Process, port_is_listening, wait_until
from paidtwice.engine._provision import cache_root, ensure_restatectl, ensure_server_binary
from paidtwice.engine._server import RestateServer
from paidtwice.engine._sql import (
    FailureEvent,
    InvocationRow,
    JournalEntry,
    QueryFailed,
    SqlClient,
    journal_from_rows,
)

__all__ = [
    "HOST",
    "AdminCall",
    "AdminClient",
    "ClusterNode",
    "ClusterSqlClient",
    "Deployment",
    "FailureEvent",
    "ForkServer",
    "IngressClient",
    "InvocationRow",
    "JournalEntry",
    "PartitionLeader",
    "PortLease",
    "Process",
    "QueryFailed",
    "RestateCluster",
    "RestateServer",
    "SqlClient",
    "cache_root",
    "ensure_restatectl",
    "ensure_server_binary",
    "journal_from_rows",
    "lease_port",
    "port_is_listening",
    "wait_until",
]
