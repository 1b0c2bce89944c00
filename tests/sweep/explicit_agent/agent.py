"""A planner that journals both its model calls, twice over: once under restate-sdk's preview
explicit_recovery ("Explicit"), once as usual ("Journaled"). Under explicit recovery a retry replays nothing,
so an answer journaled before a kill is paid for again."""

from __future__ import annotations

import os
from datetime import timedelta

import httpx
import restate
from restate._preview import explicit_recovery

explicit = explicit_recovery(restate.Service("Explicit"))
journaled = restate.Service("Journaled")


async def complete(messages: list[dict[str, str]]) -> str:
    base = os.environ["OPENAI_BASE_URL"].rstrip("/")
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(
            f"{base}/chat/completions",
            headers={"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"},
            json={"model": "gpt-4o-mini", "messages": messages},
        )
        response.raise_for_status()
        return str(response.json()["choices"][0]["message"]["content"])


async def plan(ctx: restate.Context, goal: str) -> str:
    """Two turns of one conversation, each journaled, a durable pause between them."""
    messages = [{"role": "user", "content": f"Outline: {goal}"}]
    outline = await ctx.run_typed("outline", complete, messages=messages)
    await ctx.sleep(timedelta(seconds=1.5))
    messages += [{"role": "assistant", "content": outline}, {"role": "user", "content": "Detail it."}]
    return await ctx.run_typed("detail", complete, messages=messages)


@explicit.handler("run")
async def run_explicit(ctx: restate.Context, goal: str) -> str:
    return await plan(ctx, goal)


@journaled.handler("run")
async def run_journaled(ctx: restate.Context, goal: str) -> str:
    return await plan(ctx, goal)


app = restate.app([explicit, journaled])
