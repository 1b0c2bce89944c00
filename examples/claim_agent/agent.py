"""A claim agent in plain Restate with the `openai` client: plan the review, run three checks as journaled
steps started together (`restate.gather`), decide. `run` journals both model calls (`ctx.run_typed`);
`run_naive` is the same agent with its model calls outside the journal (the checks are steps in both).

    paidtwice sweep --app agent:app --service Claim --handler run \\
        --input '"Dental cleaning, 120 EUR, 2026-11-02"' \\
        --script examples/claim_agent/plain.toml --app-dir examples/claim_agent --check
"""

from __future__ import annotations

import restate
from checks import calculate_metrics
from openai import AsyncOpenAI

client = AsyncOpenAI()

claim_service = restate.Service("Claim")


async def ask(prompt: str) -> str:
    """One chat-completions call with a single user message; returns the answer's text."""
    response = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
    )
    return response.choices[0].message.content or ""


@claim_service.handler()
async def run(ctx: restate.Context, claim: str) -> str:
    """Every model call journaled."""
    plan = await ctx.run_typed("plan", ask, prompt=f"Plan the review of this claim: {claim}")
    metrics = await calculate_metrics(ctx, claim)
    return await ctx.run_typed("decide", ask, prompt=f"Decide on the claim. Plan: {plan}. Checks: {metrics}")


@claim_service.handler()
async def run_naive(ctx: restate.Context, claim: str) -> str:
    """The same agent, its model calls outside the journal."""
    plan = await ask(f"Plan the review of this claim: {claim}")
    metrics = await calculate_metrics(ctx, claim)
    return await ask(f"Decide on the claim. Plan: {plan}. Checks: {metrics}")


app = restate.app([claim_service])
