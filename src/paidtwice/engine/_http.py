"""The one HTTP client paidtwice uses for its own requests to its servers (admin, SQL, ingress, health).

`httpx.get(...)` and friends make a new client for every request, and a new client builds an SSL context and
loads the CA bundle (about 30 ms of CPU) even for a plain-HTTP loopback URL. The lab's poller queries the
server fifty times a second, and that alone took half of the lab's CPU in a concurrent deck. One client,
shared by every thread (httpx's client is thread-safe), pays for that once and keeps connections alive. A
connection to a server that was killed is closed by the kernel, and the pool drops it before reusing it.
"""

from __future__ import annotations

import threading

import httpx

__all__ = ["http"]

_client: httpx.Client | None = None
_lock = threading.Lock()


def http() -> httpx.Client:
    """The process's shared client; each request passes its own timeout."""
    global _client
    with _lock:
        if _client is None:
            # No cap on connections: attach calls hold one each for as long as an invocation runs.
            _client = httpx.Client(limits=httpx.Limits(max_connections=None, max_keepalive_connections=32))
        return _client
