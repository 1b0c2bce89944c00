"""PT001: Google ADK agents run by a Runner in a handler. Without Restate's plugin (restate.ext.adk's
RestatePlugin, on the App or the Runner) every model call of the run is made again on a replay; with it, each
is a journaled step. An ADK tool (a function in `Agent(tools=[...])`) runs again on every replay either way,
so what it does outside `restate_context().run_typed` is reported in the tool."""

import httpx
import restate
from google.adk import Agent, Runner
from google.adk.apps import App
from google.adk.models import Gemini
from google.adk.models.llm_request import LlmRequest
from google.adk.plugins import LoggingPlugin
from google.adk.runners import InMemoryRunner
from google.adk.sessions import InMemorySessionService
from google.adk.tools import FunctionTool
from google.genai.types import Content, Part
from restate.ext.adk import RestatePlugin, RestateSessionService, restate_context


async def get_weather(city: str) -> dict[str, str]:
    """Get the weather in a city (a plain HTTP call: run again on every replay)."""
    answer = httpx.get(f"https://weather.example/{city}")  # expect: PT001
    return {"weather": answer.text}


async def get_weather_durably(city: str) -> dict[str, str]:
    """Get the weather in a city, in a journaled step."""

    async def fetch() -> str:
        return httpx.get(f"https://weather.example/{city}").text

    return {"weather": await restate_context().run_typed("weather", fetch)}


def book(city: str) -> str:
    """Book a table (a FunctionTool)."""
    return httpx.post("https://bookings.example", json={"city": city}).text  # expect: PT001


agent = Agent(
    model="gemini-2.5-flash",
    name="weather_agent",
    instruction="Say what the weather is.",
    tools=[get_weather, get_weather_durably, FunctionTool(book)],
)

plain_runner = Runner(agent=agent, app_name="agents", session_service=InMemorySessionService())
plain_app = App(name="agents", root_agent=agent, plugins=[LoggingPlugin()])
app = App(name="agents", root_agent=agent, plugins=[LoggingPlugin(), RestatePlugin()])
runner = Runner(app=app, session_service=RestateSessionService())
plugins = [RestatePlugin()]
listed_runner = Runner(agent=agent, app_name="agents", plugins=plugins)

chat = restate.VirtualObject("AdkChat")


def message(text: str) -> Content:
    return Content(role="user", parts=[Part.from_text(text=text)])


async def final_text(events) -> str:  # type: ignore[no-untyped-def]
    text = ""
    async for event in events:
        if event.is_final_response() and event.content and event.content.parts:
            text = event.content.parts[0].text or text
    return text


@chat.handler()
async def plain(ctx: restate.ObjectContext, text: str) -> str:
    events = plain_runner.run_async(user_id="u", session_id="s", new_message=message(text))  # expect: PT001
    return await final_text(events)


@chat.handler()
async def plain_app_runner(ctx: restate.ObjectContext, question: str) -> str:
    local = Runner(app=plain_app, session_service=InMemorySessionService())
    events = local.run_async(user_id="u", session_id="s", new_message=message(question))  # expect: PT001
    return await final_text(events)


@chat.handler()
async def in_memory(ctx: restate.ObjectContext, question: str) -> str:
    async with InMemoryRunner(agent) as local:
        events = local.run_async(user_id="u", session_id="s", new_message=message(question))  # expect: PT001
        return await final_text(events)


@chat.handler()
async def durable(ctx: restate.ObjectContext, question: str) -> str:
    events = runner.run_async(user_id=ctx.key(), session_id="s", new_message=message(question))
    return await final_text(events)


@chat.handler()
async def durable_local(ctx: restate.ObjectContext, question: str) -> str:
    local_app = App(name="agents", root_agent=agent, plugins=[RestatePlugin()])
    local = Runner(app=local_app, session_service=RestateSessionService())
    return await final_text(local.run_async(user_id=ctx.key(), session_id="s", new_message=message(question)))


@chat.handler()
async def durable_listed(ctx: restate.ObjectContext, question: str) -> str:
    events = listed_runner.run_async(user_id=ctx.key(), session_id="s", new_message=message(question))
    return await final_text(events)


gemini = Gemini(model="gemini-2.5-flash")


@chat.handler()
async def model_directly(ctx: restate.ObjectContext, question: str) -> str:
    request = LlmRequest(contents=[message(question)])
    async for response in gemini.generate_content_async(request):  # expect: PT001
        return str(response.content)
    return ""
