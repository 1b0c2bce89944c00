"""PT001 in an agent's tool: a tool runs again on every replay of the agent's run, also through Restate's
integrations (they journal the model's answers, not the tools), unless its side effect is in a step of its
own (`restate_context().run_typed`) or pydantic-ai's RestateAgent(..., auto_wrap_tools=True) wraps it."""

import httpx
import restate
from agents import function_tool
from langchain.tools import tool
from pydantic_ai import Agent, RunContext
from restate.ext.openai import durable_function_tool, restate_context
from restate.ext.pydantic import RestateAgent

helper = restate.Service("Tools")  # a module that registers handlers elsewhere still has tools here

weather_agent = Agent("openai:gpt-4o-mini")
wrapped_agent = Agent("openai:gpt-4o-mini")
durable_weather = RestateAgent(weather_agent)
auto_wrapped = RestateAgent(wrapped_agent, auto_wrap_tools=True)


@function_tool
async def forecast(city: str) -> str:
    async with httpx.AsyncClient() as client:
        return (await client.get(f"https://weather.example/{city}")).text  # expect: PT001


@durable_function_tool
async def book(city: str) -> str:
    response = httpx.post("https://hotels.example/book", json={"city": city})  # expect: PT001
    return response.text


@durable_function_tool
async def book_journaled(city: str) -> str:
    def post() -> str:
        return httpx.post("https://hotels.example/book", json={"city": city}).text

    return await restate_context().run_typed("book", post)


@durable_function_tool
async def book_lambda(city: str) -> str:
    ctx = restate_context()
    return await ctx.run_typed("book", lambda: httpx.post("https://hotels.example/book").text)


@tool
def rates(currency: str) -> str:
    """Exchange rates."""
    return httpx.get(f"https://rates.example/{currency}").text  # expect: PT001


@weather_agent.tool
async def alerts(ctx: RunContext[None], city: str) -> str:
    return httpx.get(f"https://alerts.example/{city}").text  # expect: PT001


@wrapped_agent.tool_plain
def wrapped_alerts(city: str) -> str:
    return httpx.get(f"https://alerts.example/{city}").text


def not_a_tool(city: str) -> str:
    return httpx.get(f"https://alerts.example/{city}").text
