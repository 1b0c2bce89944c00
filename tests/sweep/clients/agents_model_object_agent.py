"""The OpenAI Agents SDK's agent given a model object (as its docs show for chat completions and other
providers) and run through Restate's DurableRunner: DurableRunner journals only the models its provider
resolves by name, so this agent's model calls are made outside the journal."""

from __future__ import annotations

import restate
from agents import Agent, OpenAIChatCompletionsModel, set_tracing_disabled
from openai import AsyncOpenAI
from restate.ext.openai import DurableRunner

set_tracing_disabled(True)

advisor = Agent(
    name="Advisor",
    instructions="Answer questions about prices abroad.",
    model=OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=AsyncOpenAI()),
)

service = restate.Service("AgentsModelObject")


@service.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    result = await DurableRunner.run(advisor, question)  # lint: model-object
    return str(result.final_output)


app = restate.app([service])
