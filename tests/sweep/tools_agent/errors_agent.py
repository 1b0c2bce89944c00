"""An agent whose model fails before it answers, for tests/sweep/test_sweep_answers.py: the official openai
client retries a 429 (after its Retry-After) and a 500 itself (Retrying); the plain httpx form
raises, so the handler fails and Restate retries the invocation (Failing)."""

from __future__ import annotations

import os

import httpx
import openai
import restate

retrying = restate.Service("Retrying")
failing = restate.Service("Failing")


def note(text: str) -> str:
    return text.upper()


@retrying.handler()
async def ask(ctx: restate.Context, question: str) -> str:
    client = openai.AsyncOpenAI(max_retries=3, timeout=1.0)
    reply = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
    )
    return await ctx.run_typed("note", note, text=str(reply.choices[0].message.content))


@failing.handler("ask")
async def ask_plainly(ctx: restate.Context, question: str) -> str:
    async with httpx.AsyncClient(timeout=1.0) as client:
        response = await client.post(
            f"{os.environ['OPENAI_BASE_URL']}/chat/completions",
            json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]},
            headers={"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"},
        )
    # An error answer fails the attempt: Restate retries the invocation, which asks again.
    response.raise_for_status()
    answer = str(response.json()["choices"][0]["message"]["content"])
    return await ctx.run_typed("note", note, text=answer)


app = restate.app([retrying, failing])
