"""The event loop every protocol proxy of the process runs on, in a thread of its own."""

from __future__ import annotations

import asyncio
import threading

__all__ = ["proxy_loop"]

_lock = threading.Lock()
_loop: list[asyncio.AbstractEventLoop] = []


def proxy_loop() -> asyncio.AbstractEventLoop:
    """The proxies' loop, started by the first call."""
    with _lock:
        if not _loop:
            loop = asyncio.new_event_loop()
            # hypercorn reports, from its own tasks, streams the server reset after a kill cut them:
            # expected here, and not the user's business.
            loop.set_exception_handler(lambda _loop, _context: None)
            threading.Thread(target=loop.run_forever, name="paidtwice-proxy", daemon=True).start()
            _loop.append(loop)
        return _loop[0]
