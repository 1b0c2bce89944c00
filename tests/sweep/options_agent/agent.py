"""A claims desk written with restate-sdk 1.3.0's production options: its own invocation retry policy on the
service and another on one handler (which needs discovery v4), timeouts and retentions, a handler that
returns None, a private service its public handler calls, and a handler that reads state without calling
the model. The model client reads OPENAI_BASE_URL, which paidtwice points at its stub."""

from __future__ import annotations

from datetime import timedelta

import restate
from openai import AsyncOpenAI
from pydantic import BaseModel

client = AsyncOpenAI()


class Claim(BaseModel):
    text: str


async def ask(prompt: str) -> str:
    response = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
    )
    return response.choices[0].message.content or ""


desk = restate.Service(
    "Desk",
    invocation_retry_policy=restate.InvocationRetryPolicy(
        initial_interval=timedelta(milliseconds=250), max_attempts=40, on_max_attempts="pause"
    ),
    inactivity_timeout=timedelta(seconds=45),
    abort_timeout=timedelta(seconds=20),
    journal_retention=timedelta(hours=6),
    idempotency_retention=timedelta(hours=2),
)
ledger = restate.Service("Ledger", ingress_private=True)


@ledger.handler()
async def enter(ctx: restate.Context, line: str) -> None:
    await ctx.run_typed("write", lambda: None)


@desk.handler()
async def assess(ctx: restate.Context, claim: Claim) -> str:
    verdict = await ctx.run_typed("ask", ask, prompt=claim.text)
    await ctx.service_call(enter, arg=verdict)
    return verdict


@desk.handler(
    invocation_retry_policy=restate.InvocationRetryPolicy(
        initial_interval=timedelta(milliseconds=100), max_attempts=30, on_max_attempts="kill"
    )
)
async def note(ctx: restate.Context, claim: Claim) -> None:
    await ctx.run_typed("ask", ask, prompt=claim.text)


app = restate.app([desk, ledger])
