"""The same agent with its model call journaled: a replay reads the answer back."""

from __future__ import annotations

import restate
from naive_agent import ask

journaled = restate.Service("Journaled")


@journaled.handler()
async def answer(ctx: restate.Context, question: str) -> str:
    text = await ctx.run_typed("ask", ask, question=question)
    return await ctx.run_typed("shout", lambda: text.upper())
