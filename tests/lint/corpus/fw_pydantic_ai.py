"""PT001: pydantic-ai Agent.run / run_sync in a handler; RestateAgent (Restate's wrapper) is not."""

import restate
from pydantic_ai import Agent
from restate.ext.pydantic import RestateAgent

support = restate.Service("Support")

agent = Agent("openai:gpt-4o-mini", instructions="Be concise.")
durable_agent = RestateAgent(agent)


@support.handler()
async def answer(ctx: restate.Context, question: str) -> str:
    result = await agent.run(question)  # expect: PT001
    return result.output


@support.handler()
async def answer_sync(ctx: restate.Context, question: str) -> str:
    local = Agent("anthropic:claude-sonnet-4-5")
    return local.run_sync(question).output  # expect: PT001


@support.handler()
async def answer_durably(ctx: restate.Context, question: str) -> str:
    result = await durable_agent.run(question)
    return result.output


@support.handler()
async def answer_wrapped_here(ctx: restate.Context, question: str) -> str:
    wrapped = RestateAgent(Agent("openai:gpt-4o-mini"))
    result = await wrapped.run(question)
    return result.output


def make_agent() -> Agent:
    return Agent("openai:gpt-4o-mini", instructions="Be concise.")


@support.handler()
async def answer_from_factory(ctx: restate.Context, question: str) -> str:
    result = await make_agent().run(question)  # expect: PT001
    return result.output


@support.handler()
async def answer_streamed(ctx: restate.Context, question: str) -> str:
    async with agent.run_stream(question) as streamed:  # expect: PT001
        return await streamed.get_output()
