"""The claim agent on LangChain (`create_agent`): one tool, `calculate_metrics`, runs three checks as
journaled steps started together (`restate.gather`). Without middleware (ClaimLangchainPlain, model calls
outside the journal) and with Restate's `RestateMiddleware` (ClaimLangchainDurable).

    paidtwice sweep --app langchain_app:app --service ClaimLangchainDurable --handler run \\
        --input '"Dental cleaning, 120 EUR, 2026-11-02"' --script examples/claim_agent/script.toml \\
        --app-dir examples/claim_agent --check
"""

from __future__ import annotations

import restate
from checks import INSTRUCTIONS, calculate_metrics
from langchain.agents import create_agent
from langchain.tools import tool
from langchain_openai import ChatOpenAI
from restate.ext.langchain import RestateMiddleware, restate_context


@tool("calculate_metrics")
async def calculate_metrics_tool(claim: str) -> list[str]:
    """Calculate the claim's metrics."""
    return await calculate_metrics(restate_context(), claim)


model = ChatOpenAI(model="gpt-4o-mini")
plain_agent = create_agent(model, tools=[calculate_metrics_tool], system_prompt=INSTRUCTIONS)
durable_agent = create_agent(
    model, tools=[calculate_metrics_tool], system_prompt=INSTRUCTIONS, middleware=[RestateMiddleware()]
)

plain = restate.Service("ClaimLangchainPlain")
durable = restate.Service("ClaimLangchainDurable")


@plain.handler("run")
async def plain_run(ctx: restate.Context, claim: str) -> str:
    state = await plain_agent.ainvoke({"messages": [{"role": "user", "content": claim}]})
    return str(state["messages"][-1].content)


@durable.handler("run")
async def durable_run(ctx: restate.Context, claim: str) -> str:
    state = await durable_agent.ainvoke({"messages": [{"role": "user", "content": claim}]})
    return str(state["messages"][-1].content)


app = restate.app([plain, durable])
