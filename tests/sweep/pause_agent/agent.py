"""A handler whose durable pause is a blink (20 ms): a kill aimed at it lands in it only because the host
withholds the pause's end until the kill. For tests/sweep/test_pause_held.py."""

from __future__ import annotations

from datetime import timedelta

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()


async def ask(prompt: str) -> str:
    response = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
    )
    return response.choices[0].message.content or ""


blink = restate.Service("Blink")


@blink.handler()
async def run(ctx: restate.Context, question: str) -> str:
    draft = await ctx.run_typed("draft", ask, prompt=question)
    await ctx.sleep(timedelta(milliseconds=20))
    return await ctx.run_typed("polish", ask, prompt=f"polish {draft}")


app = restate.app(services=[blink])
