"""The engine: restate-server provisioning and process, the agents' fork server, and clients for the server's
admin, ingress and SQL."""

from paidtwice.engine._admin import AdminCall, AdminClient, Deployment
from paidtwice.engine._forkserver import ForkServer
from paidtwice.engine._ingress import IngressClient
from paidtwice.engine._ports import HOST, PortLease, lease_port
from paidtwice.engine._process import Process, port_is_listening, wait_until
from paidtwice.engine._provision import cache_root, ensure_server_binary
from paidtwice.engine._server import RestateServer
from paidtwice.engine._sql import (
    FailureEvent,
    InvocationRow,
    JournalEntry,
    SqlClient,
    journal_from_rows,
)

__all__ = [
    "HOST",
    "AdminCall",
    "AdminClient",
    "Deployment",
    "FailureEvent",
    "ForkServer",
    "IngressClient",
    "InvocationRow",
    "JournalEntry",
    "PortLease",
    "Process",
    "RestateServer",
    "SqlClient",
    "cache_root",
    "ensure_server_binary",
    "journal_from_rows",
    "lease_port",
    "port_is_listening",
    "wait_until",
]
