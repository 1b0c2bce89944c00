"""One finding per (line, code): repeated calls of a kind on one line, or inside one helper, count once."""

import time

import httpx
import restate
from restate import Context

sync = restate.Service("Sync")


def pull_both(a: str, b: str) -> tuple[str, str]:
    first = httpx.get(a).text
    second = httpx.get(b).text
    return first, second


@sync.handler()
async def window(ctx: Context) -> float:
    return time.time() - time.time() + time.monotonic()  # expect: PT002


@sync.handler()
async def pair(ctx: Context, a: str, b: str) -> list[str]:
    x, y = pull_both(a, b)  # expect: PT001
    z, w = pull_both(b, a)  # expect: PT001
    return [x, y, z, w]
