"""The HTTP client paidtwice uses for its own requests to its servers (admin, SQL, ingress, health): one per
thread, every one on the same SSL context.

`httpx.get(...)` and friends make a new client for every request, and a new client builds an SSL context and
loads the CA bundle (about 30 ms of CPU) even for a plain-HTTP loopback URL. The lab's poller queries the
server fifty times a second, and that alone took half of the lab's CPU in a concurrent deck. The context is
built once; a client made on it costs a tenth of a millisecond and keeps its connections alive.

A client per thread, not one for the process: httpcore's pool (1.0.9, encode/httpcore#1110) hands an idle
connection to one thread's request, and before that thread has used it another thread's request may close it
(a surplus idle connection, or one whose keep-alive expired). The first thread then reads a socket closed
under it ('Bad file descriptor' from the admin or ingress client) or, once the kernel has given the number to
a new socket, polls someone else's connection. A thread's pool serves that thread alone. A thread's client is
closed when the thread ends (in the process that made it: never in a forked child).
"""

from __future__ import annotations

import os
import ssl
import threading

import httpx

__all__ = ["http"]

_context: ssl.SSLContext | None = None
_context_lock = threading.Lock()
_threads = threading.local()


class _Owned:
    """A thread's client, in that thread's slot of `_threads`: the slot goes when the thread ends, and the
    client is closed with it (its sockets closed by it, not left to the garbage collector)."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client
        self._pid = os.getpid()

    def __del__(self) -> None:
        # A forked child drops every other thread's slot as it starts (a preexec_fn child of the lab's
        # Popen, before its exec): closing there would take the pool's lock, which another thread of the
        # parent may have held at the fork, and the child would wait for it forever.
        if os.getpid() == self._pid:
            self.client.close()


def _ssl_context() -> ssl.SSLContext:
    global _context
    with _context_lock:
        if _context is None:
            _context = httpx.create_ssl_context()
        return _context


def http() -> httpx.Client:
    """The calling thread's client; each request passes its own timeout."""
    owned: _Owned | None = getattr(_threads, "owned", None)
    if owned is None:
        # No cap on connections: attach calls hold one each for as long as an invocation runs.
        client = httpx.Client(
            verify=_ssl_context(),
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=32),
        )
        owned = _threads.owned = _Owned(client)
    return owned.client
