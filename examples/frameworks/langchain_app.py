"""The travel agent on LangChain (`create_agent`), in two forms: without middleware (LangchainPlain), and with
Restate's `RestateMiddleware` (LangchainDurable), as `restate.ext.langchain` documents it.

The tool is the same in both: its side effect is a journaled step (`restate_context().run_typed`); the
middleware journals each model call (`ctx.run_typed("LLM call", ...)`) and does not wrap tools.

ChatOpenAI's client reads OPENAI_BASE_URL and OPENAI_API_KEY.

    paidtwice sweep --app langchain_app:app --service LangchainDurable --handler quote \\
        --input '"How much is 120 EUR in USD?"' --script examples/frameworks/script.toml \\
        --app-dir examples/frameworks
"""

from __future__ import annotations

import restate
from langchain.agents import create_agent
from langchain.tools import tool
from langchain_openai import ChatOpenAI
from restate.ext.langchain import RestateMiddleware, restate_context

RATES = {("EUR", "USD"): 1.08, ("USD", "EUR"): 0.93}
INSTRUCTIONS = "Answer questions about prices abroad; convert currencies with the tool."


def _convert(amount: float, source: str, target: str) -> dict[str, float | str]:
    rate = RATES[(source.upper(), target.upper())]
    return {"amount": round(amount * rate, 2), "currency": target.upper()}


@tool
async def convert(amount: float, source: str, target: str) -> dict[str, float | str]:
    """Convert an amount between currencies."""
    return await restate_context().run_typed("convert", _convert, amount=amount, source=source, target=target)


model = ChatOpenAI(model="gpt-4o-mini")
plain_agent = create_agent(model, tools=[convert], system_prompt=INSTRUCTIONS)
durable_agent = create_agent(
    model, tools=[convert], system_prompt=INSTRUCTIONS, middleware=[RestateMiddleware()]
)

plain = restate.Service("LangchainPlain")
durable = restate.Service("LangchainDurable")


@plain.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    state = await plain_agent.ainvoke({"messages": [{"role": "user", "content": question}]})
    return str(state["messages"][-1].content)


@durable.handler("quote")
async def durable_quote(ctx: restate.Context, question: str) -> str:
    state = await durable_agent.ainvoke({"messages": [{"role": "user", "content": question}]})
    return str(state["messages"][-1].content)


app = restate.app([plain, durable])
