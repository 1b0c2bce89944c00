"""Handlers that keep a replay waiting: one on something nothing gives, one working for as long as it is
asked (its input, in seconds of wall time), on an idle machine or a loaded one."""

from __future__ import annotations

import asyncio
import time

import restate

waiting = restate.Service("Waiting")


@waiting.handler()
async def stuck(ctx: restate.Context, seconds: float) -> str:
    await asyncio.Event().wait()  # not journaled, and nothing sets it
    return "never"


@waiting.handler()
async def busy(ctx: restate.Context, seconds: float) -> str:
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        sum(range(20_000))
        await asyncio.sleep(0)
    return "done"


app = restate.app([waiting])
