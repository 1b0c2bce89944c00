"""The claim agent on the OpenAI Agents SDK, as Restate's parallel-tools example writes it: one tool,
`calculate_metrics`, runs three checks as journaled steps started together (`restate.gather`). Two forms that
differ only in the runner: `Runner.run` (ClaimAgentsPlain, model calls outside the journal) and Restate's
`DurableRunner.run` (ClaimAgentsDurable, every model call journaled).

    paidtwice sweep --app agents_app:app --service ClaimAgentsDurable --handler run \\
        --input '"Dental cleaning, 120 EUR, 2026-11-02"' --script examples/claim_agent/script.toml \\
        --app-dir examples/claim_agent --check
"""

from __future__ import annotations

import restate
from agents import Agent, Runner, set_tracing_disabled
from checks import INSTRUCTIONS, calculate_metrics
from restate.ext.openai import DurableRunner, durable_function_tool, restate_context

set_tracing_disabled(True)  # no trace export to api.openai.com from the stub's runs


@durable_function_tool
async def calculate_metrics_tool(claim: str) -> list[str]:
    """Calculate the claim's metrics."""
    return await calculate_metrics(restate_context(), claim)


calculate_metrics_tool.name = "calculate_metrics"
claims_agent = Agent(
    name="Claims", instructions=INSTRUCTIONS, model="gpt-4o-mini", tools=[calculate_metrics_tool]
)

plain = restate.Service("ClaimAgentsPlain")
durable = restate.Service("ClaimAgentsDurable")


@plain.handler("run")
async def plain_run(ctx: restate.Context, claim: str) -> str:
    return str((await Runner.run(claims_agent, claim)).final_output)


@durable.handler("run")
async def durable_run(ctx: restate.Context, claim: str) -> str:
    return str((await DurableRunner.run(claims_agent, claim)).final_output)


app = restate.app([plain, durable])
