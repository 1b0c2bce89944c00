"""Serve a user's Restate app (or the deck's agent) in a process of its own, as the lab needs it.

    python -m paidtwice.agent.host MODULE:APP --port N [--attempt-log FILE] [--wait-for-go]

The app is the user's code, unchanged. The host only adds, to every handler of every Restate service found in
the module, a context manager that appends one line to the attempt log when an attempt starts: that is how
the lab counts the attempts that reached the agent, independently of the model's ledger. A line is written
with one write(2) on an O_APPEND descriptor, so it is on disk even if the process is killed right after.
It serves one process (no hypercorn workers), with HTTP/2 cleartext so the server streams.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from hypercorn.asyncio import serve
from hypercorn.config import Config

__all__ = ["main"]


def _load(target: str) -> tuple[Any, Any]:
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    return module, getattr(module, attr or "app")


def _services(module: Any) -> list[Any]:
    import restate

    kinds = (restate.Service, restate.VirtualObject, restate.Workflow)
    return [value for value in vars(module).values() if isinstance(value, kinds)]


def _attempt_recorder(fd: int) -> Callable[[], AbstractAsyncContextManager[None]]:
    from restate.server_context import current_context

    @contextlib.asynccontextmanager
    async def record_attempt() -> AsyncIterator[None]:
        ctx = current_context()
        invocation = ctx.request().id if ctx is not None else ""
        line = json.dumps({"invocation": invocation, "at": time.time(), "pid": os.getpid()})
        os.write(fd, (line + "\n").encode())
        yield

    return record_attempt


def _instrument(services: list[Any], fd: int) -> None:
    recorder = _attempt_recorder(fd)
    for service in services:
        for name, handler in list(service.handlers.items()):
            managers = [recorder, *(handler.context_managers or [])]
            service.handlers[name] = dataclasses.replace(handler, context_managers=managers)


async def _serve(app: Any, port: int) -> None:
    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.loglevel = "WARNING"
    config.graceful_timeout = 0.5
    await serve(app, config)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="paidtwice.agent.host")
    parser.add_argument("target", help="MODULE:APP, the Restate ASGI app to serve")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--attempt-log", help="file that gets one JSON line per attempt")
    parser.add_argument(
        "--wait-for-go",
        action="store_true",
        help="load the app, then open the port only when a line arrives on stdin",
    )
    parser.add_argument("--ready-file", help="created once the app is loaded (with --wait-for-go)")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.getcwd())
    module, app = _load(args.target)
    if args.attempt_log:
        fd = os.open(args.attempt_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        _instrument(_services(module), fd)
    if args.ready_file:
        with open(args.ready_file, "w") as ready:
            ready.write(f"{os.getpid()}\n")
    if args.wait_for_go:
        # A restart's start-up cost (imports) is paid while the agent is still down; the port opens at the
        # moment the lab says, so the down time is the experiment's, not Python's.
        sys.stdin.readline()
    asyncio.run(_serve(app, args.port))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
