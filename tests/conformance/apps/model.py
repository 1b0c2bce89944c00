"""The corpus apps' one model call: the official openai client, which reads OPENAI_BASE_URL (paidtwice points
it at its stub). Each app journals it through ctx.run_typed."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()


async def ask(prompt: str) -> str:
    response = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
    )
    return response.choices[0].message.content or ""


@contextlib.asynccontextmanager
async def traced() -> AsyncIterator[None]:
    """An invocation context manager, as a user's tracing would be: entered around every attempt."""
    yield


def retries(attempts: int) -> restate.InvocationRetryPolicy:
    return restate.InvocationRetryPolicy(
        initial_interval=timedelta(milliseconds=100),
        exponentiation_factor=2.0,
        max_interval=timedelta(seconds=2),
        max_attempts=attempts,
        on_max_attempts="pause",
    )
