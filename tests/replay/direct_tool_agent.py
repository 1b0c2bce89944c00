"""An agent that calls a tool over HTTP outside ctx.run, then runs a step: a replay must not send the call."""

from __future__ import annotations

import httpx
import restate

direct = restate.Service("DirectTool")


def _step() -> str:
    return "done"


@direct.handler()
async def run(ctx: restate.Context, question: str) -> str:
    async with httpx.AsyncClient() as client:
        await client.get("http://127.0.0.1:9/weather")  # lint: a tool call outside the journal
    return await ctx.run_typed("step", _step)


@direct.handler()
async def sync_call(ctx: restate.Context, question: str) -> str:
    with httpx.Client() as client:
        client.get("http://127.0.0.1:9/weather")
    return await ctx.run_typed("step", _step)


app = restate.app([direct])
