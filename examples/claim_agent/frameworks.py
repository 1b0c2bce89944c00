"""The claim agent on each framework Restate integrates, as Restate's parallel-tools example writes it: one
tool, `calculate_metrics`, runs three checks as journaled steps started together (`restate.gather`).

Each framework in two forms that differ only in the runner: the framework's own run in a handler (model
calls outside the journal: ClaimAgentsPlain, ClaimPydanticPlain, ClaimLangchainPlain) and Restate's
integration (every model call journaled: ClaimAgentsDurable with `DurableRunner`, ClaimPydanticDurable with
`RestateAgent`, ClaimLangchainDurable with `RestateMiddleware`).

    paidtwice sweep --app frameworks:app --service ClaimAgentsDurable --handler run \\
        --input '"Dental cleaning, 120 EUR, 2026-11-02"' --script examples/claim_agent/script.toml \\
        --app-dir examples/claim_agent --check
"""

from __future__ import annotations

import restate
from agents import Agent, Runner, set_tracing_disabled
from checks import calculate_metrics
from langchain.agents import create_agent
from langchain.tools import tool
from langchain_openai import ChatOpenAI
from pydantic_ai import Agent as PydanticAgent
from restate.ext import langchain as restate_langchain
from restate.ext import openai as restate_openai
from restate.ext import pydantic as restate_pydantic

set_tracing_disabled(True)  # no trace export to api.openai.com from the stub's runs

INSTRUCTIONS = "You analyze insurance claims: use the calculate_metrics tool, then decide whether to approve."


@restate_openai.durable_function_tool
async def agents_metrics(claim: str) -> list[str]:
    """Calculate the claim's metrics."""
    return await calculate_metrics(restate_openai.restate_context(), claim)


agents_metrics.name = "calculate_metrics"
agents_agent = Agent(name="Claims", instructions=INSTRUCTIONS, model="gpt-4o-mini", tools=[agents_metrics])

pydantic_agent = PydanticAgent("openai:gpt-4o-mini", instructions=INSTRUCTIONS)


@pydantic_agent.tool_plain(name="calculate_metrics")
async def pydantic_metrics(claim: str) -> list[str]:
    """Calculate the claim's metrics."""
    return await calculate_metrics(restate_pydantic.restate_context(), claim)


pydantic_restate_agent = restate_pydantic.RestateAgent(pydantic_agent)


@tool("calculate_metrics")
async def langchain_metrics(claim: str) -> list[str]:
    """Calculate the claim's metrics."""
    return await calculate_metrics(restate_langchain.restate_context(), claim)


model = ChatOpenAI(model="gpt-4o-mini")
langchain_plain_agent = create_agent(model, tools=[langchain_metrics], system_prompt=INSTRUCTIONS)
langchain_durable_agent = create_agent(
    model,
    tools=[langchain_metrics],
    system_prompt=INSTRUCTIONS,
    middleware=[restate_langchain.RestateMiddleware()],
)

agents_plain = restate.Service("ClaimAgentsPlain")
agents_durable = restate.Service("ClaimAgentsDurable")
pydantic_plain = restate.Service("ClaimPydanticPlain")
pydantic_durable = restate.Service("ClaimPydanticDurable")
langchain_plain = restate.Service("ClaimLangchainPlain")
langchain_durable = restate.Service("ClaimLangchainDurable")


@agents_plain.handler("run")
async def agents_plain_run(ctx: restate.Context, claim: str) -> str:
    return str((await Runner.run(agents_agent, claim)).final_output)


@agents_durable.handler("run")
async def agents_durable_run(ctx: restate.Context, claim: str) -> str:
    return str((await restate_openai.DurableRunner.run(agents_agent, claim)).final_output)


@pydantic_plain.handler("run")
async def pydantic_plain_run(ctx: restate.Context, claim: str) -> str:
    return (await pydantic_agent.run(claim)).output


@pydantic_durable.handler("run")
async def pydantic_durable_run(ctx: restate.Context, claim: str) -> str:
    return (await pydantic_restate_agent.run(claim)).output


@langchain_plain.handler("run")
async def langchain_plain_run(ctx: restate.Context, claim: str) -> str:
    state = await langchain_plain_agent.ainvoke({"messages": [{"role": "user", "content": claim}]})
    return str(state["messages"][-1].content)


@langchain_durable.handler("run")
async def langchain_durable_run(ctx: restate.Context, claim: str) -> str:
    state = await langchain_durable_agent.ainvoke({"messages": [{"role": "user", "content": claim}]})
    return str(state["messages"][-1].content)


app = restate.app(
    [agents_plain, agents_durable, pydantic_plain, pydantic_durable, langchain_plain, langchain_durable]
)
