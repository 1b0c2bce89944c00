"""A one-call agent that asks its model outside the journal: a replay pays for the answer again."""

from __future__ import annotations

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()
naive = restate.Service("Naive")


async def ask(question: str) -> str:
    response = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
    )
    return response.choices[0].message.content or ""


@naive.handler()
async def answer(ctx: restate.Context, question: str) -> str:
    text = await ask(question)
    return await ctx.run_typed("shout", lambda: text.upper())
