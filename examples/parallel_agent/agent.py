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


async def assess(ctx: restate.Context, change: str, *, journaled: bool) -> str:
    summarize = f"Summarize this planned change in one sentence:\n\n{change}"
    summary = await (ctx.run_typed("summarize", ask, prompt=summarize) if journaled else ask(summarize))
    prompts = [f"Analyze the impact on {who} of this change: {summary}" for who in STAKEHOLDERS]
    if journaled:
        futures = [
            ctx.run_typed(f"impact on {who}", ask, prompt=prompt)
            for who, prompt in zip(STAKEHOLDERS, prompts, strict=True)
        ]
        await restate.gather(*futures)
        analyses = [await future for future in futures]
    else:
        analyses = list(await asyncio.gather(*(ask(prompt) for prompt in prompts)))
    combine = "Combine these impact analyses into one recommendation:\n\n" + "\n\n".join(analyses)
    return await (ctx.run_typed("combine", ask, prompt=combine) if journaled else ask(combine))


@impact.handler()
async def run(ctx: restate.Context, change: str) -> str:
    """Summary, two analyses in parallel, recommendation: every model call journaled."""
    return await assess(ctx, change, journaled=True)


@impact.handler()
async def run_naive(ctx: restate.Context, change: str) -> str:
    """The same, every model call outside the journal."""
    return await assess(ctx, change, journaled=False)


app = restate.app([impact])
