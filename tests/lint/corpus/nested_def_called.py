"""A nested def inside a handler, called directly: reported at the call line, not at the def's body."""

import time

import httpx
import restate
from restate import Context

monitor = restate.Service("Monitor")


@monitor.handler()
async def check(ctx: Context, urls: list[str]) -> dict:
    async def status_of(url: str) -> int:
        async with httpx.AsyncClient(timeout=3.0) as http:
            resp = await http.get(url)
        return resp.status_code

    def elapsed_since(t0: float) -> float:
        return time.monotonic() - t0

    def label(code: int) -> str:
        return "up" if code < 500 else "down"

    results = {}
    for url in urls:
        code = await status_of(url)  # expect: PT001
        results[url] = label(code)
    results["took"] = elapsed_since(0.0)  # expect: PT002
    return results
