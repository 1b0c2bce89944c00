"""Two handlers swept with the inputs paidtwice makes from their schemas: a claim desk that takes any text,
and a judge that, as Restate's langfuse example does, scores the trace its input's W3C `traceparent` names,
after asking the model: its step fails on any made-up string, attempt after attempt."""

from __future__ import annotations

import re
from datetime import timedelta

import restate
from openai import AsyncOpenAI
from pydantic import BaseModel

client = AsyncOpenAI()

TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}")


class Review(BaseModel):
    traceparent: str
    output: str


async def ask(prompt: str) -> str:
    response = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
    )
    return response.choices[0].message.content or ""


def trace_id(traceparent: str) -> str:
    found = TRACEPARENT.fullmatch(traceparent)
    if found is None:
        # Two lines, as a library's error often has: the sweep names the first.
        raise ValueError(f"not a W3C traceparent: {traceparent!r}\nexpected 00-TRACE_ID-SPAN_ID-FLAGS")
    return found.group(1)


claims = restate.Service("Claims")


@claims.handler()
async def assess(ctx: restate.Context, text: str) -> str:
    return await ctx.run_typed("ask", ask, prompt=f"assess this claim: {text}")


# Retried quickly: the sweep gives up on a clean run after five failed attempts.
judge = restate.Service(
    "Judge",
    invocation_retry_policy=restate.InvocationRetryPolicy(
        initial_interval=timedelta(milliseconds=100), exponentiation_factor=1.0
    ),
)


@judge.handler()
async def score(ctx: restate.Context, review: Review) -> str:
    verdict = await ctx.run_typed("ask", ask, prompt=f"score this answer: {review.output}")
    trace = await ctx.run_typed("trace id", trace_id, traceparent=review.traceparent)
    return f"{verdict} (trace {trace})"


app = restate.app(services=[claims, judge])
