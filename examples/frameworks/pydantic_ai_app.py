"""The travel agent on pydantic-ai, in two forms: `Agent.run` in a Restate handler (PydanticPlain), and the
same agent wrapped in Restate's `RestateAgent` (PydanticDurable), as `restate.ext.pydantic` documents it.

The tool is the same in both: its side effect is a journaled step (`restate_context().run_typed`).
RestateAgent routes every model request through `ctx.run_typed`; Agent.run makes it plainly.

The model is "openai:gpt-4o-mini" (chat completions), whose client reads OPENAI_BASE_URL and OPENAI_API_KEY.

    paidtwice sweep --app pydantic_ai_app:app --service PydanticDurable --handler quote \\
        --input '"How much is 120 EUR in USD?"' --script examples/frameworks/script.toml \\
        --app-dir examples/frameworks
"""

from __future__ import annotations

import restate
from pydantic_ai import Agent
from restate.ext.pydantic import RestateAgent, restate_context

RATES = {("EUR", "USD"): 1.08, ("USD", "EUR"): 0.93}

travel_agent = Agent(
    "openai:gpt-4o-mini",
    instructions="Answer questions about prices abroad; convert currencies with the tool.",
)


def _convert(amount: float, source: str, target: str) -> dict[str, float | str]:
    rate = RATES[(source.upper(), target.upper())]
    return {"amount": round(amount * rate, 2), "currency": target.upper()}


@travel_agent.tool_plain
async def convert(amount: float, source: str, target: str) -> dict[str, float | str]:
    """Convert an amount between currencies."""
    return await restate_context().run_typed("convert", _convert, amount=amount, source=source, target=target)


durable_agent = RestateAgent(travel_agent)

plain = restate.Service("PydanticPlain")
durable = restate.Service("PydanticDurable")


@plain.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    result = await travel_agent.run(question)
    return result.output


@durable.handler("quote")
async def durable_quote(ctx: restate.Context, question: str) -> str:
    result = await durable_agent.run(question)
    return result.output


app = restate.app([plain, durable])
