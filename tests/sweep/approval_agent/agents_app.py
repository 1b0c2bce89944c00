"""Restate's tour-of-agents human approval (`human_approval_agent.py`) on the OpenAI Agents SDK: a durable
tool makes an awakeable, sends its id out in a "Request review" step, then awaits it. Through Restate's
`DurableRunner` (ClaimDurable) and through the SDK's own `Runner.run` (ClaimPlain, its model calls outside
the journal). For `tests/sweep/test_sweep_approval.py`, swept with no script, input or handler named."""

from __future__ import annotations

import restate
from agents import Agent, Runner, set_tracing_disabled
from pydantic import BaseModel
from restate.ext.openai import DurableRunner, durable_function_tool, restate_context

set_tracing_disabled(True)  # no trace export to api.openai.com from the stub's runs


class InsuranceClaim(BaseModel):
    claimant: str
    amount: float


class ClaimPrompt(BaseModel):
    message: str


def request_human_review(claim: InsuranceClaim, awakeable_id: str) -> str:
    """Stands for the message carrying the id to a reviewer."""
    return f"review of {claim.claimant}'s claim requested: {awakeable_id}"


@durable_function_tool
async def human_approval(claim: InsuranceClaim) -> str:
    """Ask for human approval for high-value claims."""
    approval_id, approval_promise = restate_context().awakeable(type_hint=str)
    await restate_context().run_typed(
        "Request review", request_human_review, claim=claim, awakeable_id=approval_id
    )
    return await approval_promise


agent = Agent(
    name="ClaimApprovalAgent",
    instructions="Evaluate insurance claims; above 1000, ask for human approval with the tool.",
    model="gpt-4o-mini",
    tools=[human_approval],
)

durable = restate.Service("ClaimDurable")
plain = restate.Service("ClaimPlain")


@durable.handler()
async def run(_ctx: restate.Context, req: ClaimPrompt) -> str:
    result = await DurableRunner.run(agent, req.message)
    return str(result.final_output)


@plain.handler("run")
async def plain_run(_ctx: restate.Context, req: ClaimPrompt) -> str:
    result = await Runner.run(agent, req.message)
    return str(result.final_output)


app = restate.app(services=[durable, plain])
