"""A desk that sends a line to one clerk and calls another: the sent clerk waits before it starts in every
run but the first (a marker file beside this module), so it runs before the called one in the clean run
and after it in the crash points' runs, as callees of sends and calls race on a busy machine. For
tests/sweep/test_callee_order.py."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import restate

FIRST_RUN_DONE = Path(__file__).with_name("first_run_done")

clerk = restate.Service("Clerk", ingress_private=True)


@clerk.handler()
async def file(ctx: restate.Context, line: str) -> str:
    late = line == "sent" and FIRST_RUN_DONE.exists()
    if late:
        await asyncio.sleep(3.0)  # long after the called clerk ran (the desk waits 1 s before calling it)
    filed = await ctx.run_typed("write", lambda: f"filed {line}")
    if line == "sent":
        FIRST_RUN_DONE.touch()
    return filed


desk = restate.Service("Desk")


@desk.handler()
async def answer(ctx: restate.Context, question: str) -> str:
    ctx.service_send(file, arg="sent")
    # In the clean run the sent clerk files its line during this pause, before the call.
    await ctx.sleep(timedelta(seconds=1), name="settle")
    return await ctx.service_call(file, arg="called")


app = restate.app([desk, clerk])
