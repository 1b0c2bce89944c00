"""The CPU one request costs an async HTTP client, by the number of requests in flight: httpx vs httpx2.

.venv/bin/python bench/http_pool.py [REQUESTS]     (default 1500 per client and concurrency)

A local server (hypercorn, in a process of its own, so its CPU is not counted) answers a small JSON body;
the client runs R workers, each sending its share of the requests one after the other, and the figure is
the client process's CPU time per request. httpx's pool rescans every connection for every queued request
(encode/httpcore#1035), so its cost grows with R; httpx2's should not.
"""

from __future__ import annotations

import asyncio
import importlib
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _docs import load_average, write_table

from paidtwice.engine._ports import HOST, lease_port
from paidtwice.engine._process import Process, wait_until

_SERVER = """
import asyncio, sys
from hypercorn.asyncio import serve
from hypercorn.config import Config

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    body = b'{"ok": true}'
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})

config = Config()
config.bind = [sys.argv[1]]
config.accesslog = None
config.keep_alive_timeout = 75
asyncio.run(serve(app, config))
"""

_CONCURRENCY = (10, 300, 1000)


async def _cpu_per_request(client_module: str, url: str, in_flight: int, requests: int) -> float:
    """Client CPU seconds per request with `in_flight` workers; raises if the pool gives up."""
    module: Any = importlib.import_module(client_module)
    async with module.AsyncClient(timeout=120.0) as client:

        async def worker(count: int) -> None:
            for _ in range(count):
                response = await client.post(url, json={"question": "weather"})
                response.json()

        each = max(1, requests // in_flight)
        started = time.process_time()
        await asyncio.gather(*(worker(each) for _ in range(in_flight)))
        return (time.process_time() - started) / (each * in_flight)


def main() -> None:
    requests = int(sys.argv[1]) if len(sys.argv) > 1 else 1500
    load_before = load_average()
    rows: list[list[str]] = []
    lease = lease_port()
    log = Path(tempfile.mkdtemp(prefix="paidtwice-http-pool-")) / "server.log"
    server = Process(
        [sys.executable, "-c", _SERVER, f"{HOST}:{lease.port}"], name="local server", log_path=log
    )
    try:
        server.start(ports_free=False)
        if not wait_until(lambda: _listening(lease.port), timeout=30.0):
            raise SystemExit("http_pool: the local server did not start")
        url = f"http://{HOST}:{lease.port}/v1/chat/completions"
        print(f"{'in flight':>9}  {'httpx':>12}  {'httpx2':>12}   (client CPU per request)")
        for in_flight in _CONCURRENCY:
            cells = []
            for client_module in ("httpx", "httpx2"):
                try:
                    cost = asyncio.run(_cpu_per_request(client_module, url, in_flight, requests))
                    cells.append(f"{cost * 1000:.1f} ms")
                except Exception as err:  # noqa: BLE001 - a pool timeout is the finding, not a crash
                    cells.append(type(err).__name__)
            print(f"{in_flight:>9}  {cells[0]:>12}  {cells[1]:>12}", flush=True)
            rows.append([f"{in_flight:,}", *cells])
        write_table(
            "http-pool", ["R in flight", "httpx", "httpx2"], rows, load=f"{load_before} to {load_average()}"
        )
    finally:
        server.kill()
        lease.release()
        log.unlink(missing_ok=True)
        log.parent.rmdir()


def _listening(port: int) -> bool:
    try:
        socket.create_connection((HOST, port), timeout=1.0).close()
    except OSError:
        return False
    return True


if __name__ == "__main__":
    main()
