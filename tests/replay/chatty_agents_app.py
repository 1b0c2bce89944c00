"""The OpenAI Agents SDK in a Restate handler as Restate's own examples write it: no `set_tracing_disabled`,
so, left alone, the SDK tries to export traces and says "OPENAI_API_KEY is not set, skipping trace export".
For tests/replay/test_quiet.py: paidtwice's agent environment keeps that chatter out of its output."""

from __future__ import annotations

import restate
from agents import Agent
from restate.ext.openai import DurableRunner, durable_function_tool, restate_context

RATES = {("EUR", "USD"): 1.08, ("USD", "EUR"): 0.93}


def _convert(amount: float, source: str, target: str) -> dict[str, float | str]:
    rate = RATES[(source.upper(), target.upper())]
    return {"amount": round(amount * rate, 2), "currency": target.upper()}


@durable_function_tool
async def convert(amount: float, source: str, target: str) -> dict[str, float | str]:
    """Convert an amount between currencies."""
    return await restate_context().run_typed("convert", _convert, amount=amount, source=source, target=target)


travel_agent = Agent(
    name="Travel",
    instructions="Answer questions about prices abroad; convert currencies with the tool.",
    model="gpt-4o-mini",
    tools=[convert],
)

chatty = restate.Service("Chatty")


@chatty.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    result = await DurableRunner.run(travel_agent, question)
    return str(result.final_output)


app = restate.app([chatty])
