"""PT001: the OpenAI Agents SDK's Runner.run / run_sync / run_streamed in a handler; DurableRunner is not."""

import agents
import restate
from agents import Agent, Runner
from restate.ext.openai import DurableRunner

helper = restate.Service("Helper")

assistant = Agent(name="Assistant", instructions="Answer briefly.")


@helper.handler()
async def plain(ctx: restate.Context, question: str) -> str:
    result = await Runner.run(assistant, question)  # expect: PT001
    return str(result.final_output)


@helper.handler()
async def sync_and_streamed(ctx: restate.Context, question: str) -> str:
    first = agents.Runner.run_sync(assistant, question)  # expect: PT001
    streamed = Runner.run_streamed(assistant, question)  # expect: PT001
    async for _ in streamed.stream_events():
        pass
    return str(first.final_output)


@helper.handler()
async def durable(ctx: restate.Context, question: str) -> str:
    # Restate's runner journals every model call and wraps the tools.
    result = await DurableRunner.run(assistant, question)
    return str(result.final_output)


async def run_agent(question: str) -> str:
    result = await Runner.run(assistant, question)
    return str(result.final_output)


@helper.handler()
async def journaled_whole(ctx: restate.Context, question: str) -> str:
    return await ctx.run_typed("agent", run_agent, question=question)
