"""Two journaled steps after a model call, for tests/replay/test_one_index.py: the second step's name is
read from PAIDTWICE_SECOND_STEP, so the same app, renamed, is new code that diverges at that step.

Its journal: 0 input, 1 run fetch, 2 fetch's result, 3 run <second>, 4 its result, 5 output. The second step
is the SDK's command 2 and the journal's entry 3: the two indexes differ."""

from __future__ import annotations

import os

import httpx
import restate

steps = restate.Service("Steps")


async def ask(question: str) -> str:
    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{os.environ['OPENAI_BASE_URL']}/chat/completions",
            json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]},
            headers={"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"},
        )
    return str(response.json()["choices"][0]["message"]["content"])


def fetch(text: str) -> str:
    return text.strip()


def summarise(text: str) -> str:
    return text.upper()


@steps.handler()
async def run(ctx: restate.Context, question: str) -> str:
    answer = await ask(question)
    fetched = await ctx.run_typed("fetch", fetch, text=answer)
    second = os.environ.get("PAIDTWICE_SECOND_STEP", "summarise")
    return await ctx.run_typed(second, summarise, text=fetched)


app = restate.app([steps])
