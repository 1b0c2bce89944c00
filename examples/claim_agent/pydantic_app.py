"""The claim agent on pydantic-ai: one tool, `calculate_metrics`, runs three checks as journaled steps
started together (`restate.gather`). `Agent.run` in a handler (ClaimPydanticPlain, model calls outside the
journal) and the same agent wrapped in Restate's `RestateAgent` (ClaimPydanticDurable).

    paidtwice sweep --app pydantic_app:app --service ClaimPydanticDurable --handler run \\
        --input '"Dental cleaning, 120 EUR, 2026-11-02"' --script examples/claim_agent/script.toml \\
        --app-dir examples/claim_agent --check
"""

from __future__ import annotations

import restate
from checks import INSTRUCTIONS, calculate_metrics
from pydantic_ai import Agent
from restate.ext.pydantic import RestateAgent, restate_context

claims_agent = Agent("openai:gpt-4o-mini", instructions=INSTRUCTIONS)


@claims_agent.tool_plain(name="calculate_metrics")
async def calculate_metrics_tool(claim: str) -> list[str]:
    """Calculate the claim's metrics."""
    return await calculate_metrics(restate_context(), claim)


durable_agent = RestateAgent(claims_agent)

plain = restate.Service("ClaimPydanticPlain")
durable = restate.Service("ClaimPydanticDurable")


@plain.handler("run")
async def plain_run(ctx: restate.Context, claim: str) -> str:
    return (await claims_agent.run(claim)).output


@durable.handler("run")
async def durable_run(ctx: restate.Context, claim: str) -> str:
    return (await durable_agent.run(claim)).output


app = restate.app([plain, durable])
