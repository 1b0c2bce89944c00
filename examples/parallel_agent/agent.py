"""Parallel model calls, written with the official `openai` client: a change's impact on customers and on
employees is analysed by two calls in flight at once, then combined.

Call 1 summarizes the change; calls 2 and 3 run together; call 4 combines them. Its script file matches each
call by its prompt (`when`). `run` journals every model call: the two analyses are `ctx.run_typed` actions
gathered with `restate.gather`. `run_naive` makes them plainly, gathered with `asyncio.gather`.

    paidtwice sweep --app agent:app --service Impact --handler run \\
        --input '"We move the support desk to a 24/7 rota."' \\
        --script examples/parallel_agent/script.toml --app-dir examples/parallel_agent
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()

STAKEHOLDERS = ("customers", "employees")

impact = restate.Service("Impact")


async def ask(prompt: str) -> str:
    """One chat-completions call with a single user message; returns the answer's text."""
    response = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
    )
    return response.choices[0].message.content or ""


async def assess(
    change: str,
    model: Callable[[str, str], Awaitable[str]],
    together: Callable[[list[Awaitable[str]]], Awaitable[list[str]]],
) -> str:
    """Summary, two analyses in flight at once, recommendation. `model(name, prompt)` asks the model;
    `together(calls)` waits for calls started at once."""
    summary = await model("summarize", f"Summarize this planned change in one sentence:\n\n{change}")
    analyses = await together(
        [
            model(f"impact on {who}", f"Analyze the impact on {who} of this change: {summary}")
            for who in STAKEHOLDERS
        ]
    )
    return await model(
        "combine", "Combine these impact analyses into one recommendation:\n\n" + "\n\n".join(analyses)
    )


async def gather_journaled(futures: list[Any]) -> list[str]:
    """Wait for journaled steps started at once (Restate's own gather), then read their results."""
    await restate.gather(*futures)
    return [await future for future in futures]


async def gather_plain(calls: list[Awaitable[str]]) -> list[str]:
    return list(await asyncio.gather(*calls))


@impact.handler()
async def run(ctx: restate.Context, change: str) -> str:
    """Every model call journaled: the two analyses are steps gathered with `restate.gather`."""
    return await assess(
        change, lambda name, prompt: ctx.run_typed(name, ask, prompt=prompt), gather_journaled
    )


@impact.handler()
async def run_naive(ctx: restate.Context, change: str) -> str:
    """Every model call outside the journal: the two analyses gathered with `asyncio.gather`."""
    return await assess(change, lambda name, prompt: ask(prompt), gather_plain)


app = restate.app([impact])
