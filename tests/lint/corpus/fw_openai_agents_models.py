"""PT001: DurableRunner journals only models it resolves by name; an agent given a model instance
(`OpenAIChatCompletionsModel(...)`, `LitellmModel(...)`), or a run config with one, calls that model plainly.
An agent made by a factory and run with Runner.run is PT001 too; named models through DurableRunner are
not."""

import restate
from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
from agents.extensions.models.litellm_model import LitellmModel
from openai import AsyncOpenAI
from restate.ext.openai import DurableRunner

desk = restate.Service("Desk")

client = AsyncOpenAI()
named = Agent(name="Named", instructions="Answer briefly.", model="gpt-4o-mini")
default_model = Agent(name="Default", instructions="Answer briefly.")
instance = Agent(
    name="Instance",
    instructions="Answer briefly.",
    model=OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client),
)
through_litellm = Agent(name="Lite", model=LitellmModel(model="anthropic/claude-sonnet-4-5"))


def build_agent() -> Agent:
    return Agent(name="Built", instructions="Answer briefly.", model="gpt-4o-mini")


@desk.handler()
async def durable_named(ctx: restate.Context, question: str) -> str:
    first = await DurableRunner.run(named, question)
    second = await DurableRunner.run(default_model, question, run_config=RunConfig(model="gpt-4o"))
    return str(first.final_output) + str(second.final_output)


@desk.handler()
async def durable_instance(ctx: restate.Context, question: str) -> str:
    result = await DurableRunner.run(instance, question)  # expect: PT001
    return str(result.final_output)


@desk.handler()
async def durable_litellm(ctx: restate.Context, question: str) -> str:
    result = await DurableRunner.run(through_litellm, question)  # expect: PT001
    return str(result.final_output)


@desk.handler()
async def durable_config_instance(ctx: restate.Context, question: str) -> str:
    config = RunConfig(model=OpenAIChatCompletionsModel(model="gpt-4o", openai_client=client))
    result = await DurableRunner.run(named, question, run_config=config)  # expect: PT001
    return str(result.final_output)


@desk.handler()
async def plain_built(ctx: restate.Context, question: str) -> str:
    result = await Runner.run(build_agent(), question)  # expect: PT001
    return str(result.final_output)
