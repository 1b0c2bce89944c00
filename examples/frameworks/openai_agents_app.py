"""The travel agent on the OpenAI Agents SDK, in two forms: `Runner.run` in a Restate handler (AgentsPlain),
and Restate's `DurableRunner.run` (AgentsDurable), as restate-sdk's `restate.ext.openai` documents it.

The tool is the same in both: a `durable_function_tool` whose side effect is a journaled step
(`restate_context().run_typed`). The only difference is the runner: DurableRunner routes every model call
through `ctx.run_typed("call LLM", ...)`; Runner.run makes it plainly, so a replay pays for it again.

The model client reads OPENAI_BASE_URL and OPENAI_API_KEY (the SDK's default client, Responses API).

    paidtwice sweep --app openai_agents_app:app --service AgentsPlain --handler quote \\
        --input '"How much is 120 EUR in USD?"' --script examples/frameworks/script.toml \\
        --app-dir examples/frameworks
"""

from __future__ import annotations

import restate
from agents import Agent, Runner, set_tracing_disabled
from restate.ext.openai import DurableRunner, durable_function_tool, restate_context

set_tracing_disabled(True)  # no trace export to api.openai.com from the stub's runs

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

plain = restate.Service("AgentsPlain")
durable = restate.Service("AgentsDurable")


@plain.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    result = await Runner.run(travel_agent, question)
    return str(result.final_output)


@durable.handler("quote")
async def durable_quote(ctx: restate.Context, question: str) -> str:
    result = await DurableRunner.run(travel_agent, question)
    return str(result.final_output)


app = restate.app([plain, durable])
