"""A user's agent as people write it, nothing of paidtwice in it: the official `openai` client (it reads
OPENAI_BASE_URL itself), service and handler names of its own, a JSON input, the model's answers journaled
with `ctx.run_typed`, one durable sleep, and no header on any request. Its naive twin, `ConciergeNaive`,
asks the model outside the journal."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI(max_retries=0)
concierge = restate.Service("Concierge")
naive = restate.Service("ConciergeNaive")


async def advise(question: str) -> str:
    reply = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
    )
    return reply.choices[0].message.content or ""


def _question(trip: dict[str, Any]) -> str:
    return f"What should I see in {trip['city']}?"


@concierge.handler()
async def plan(ctx: restate.Context, trip: dict[str, Any]) -> str:
    answers = [
        await ctx.run_typed(f"advice {n}", advise, question=_question(trip))
        for n in range(1, int(trip.get("asks", 1)) + 1)
    ]
    await ctx.sleep(timedelta(seconds=float(trip.get("pause", 1))))
    return " / ".join(answers)


@naive.handler(name="plan")
async def plan_naive(ctx: restate.Context, trip: dict[str, Any]) -> str:
    answers = [await advise(_question(trip)) for _ in range(int(trip.get("asks", 1)))]
    await ctx.sleep(timedelta(seconds=float(trip.get("pause", 1))))
    return " / ".join(answers)


app = restate.app([concierge, naive])
