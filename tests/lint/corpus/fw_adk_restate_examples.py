"""No finding: ADK agents journaled the way Restate's own examples do it.

Written after restatedev/ai-examples (commit 91dec17), not copied: google-adk/template/agent.py (a tool whose
side effect is a `restate_context().run_typed` step, the app's plugins `[RestatePlugin()]`, the Runner made
in the handler), google-adk/tour-of-agents/app/chat_agent.py (a module-level Runner with
`RestateSessionService()` in a Virtual Object), parallel_tools_agent.py (a tool gathering journaled steps)
and error_handling.py (`RestatePlugin(run_options=...)`). `paidtwice lint` on those files themselves: no
finding; with the plugin taken out of each app, every `run_async` is PT001.
"""

from datetime import timedelta

import restate
from google.adk import Runner
from google.adk.agents.llm_agent import Agent
from google.adk.apps import App
from google.adk.sessions import InMemorySessionService
from google.genai.types import Content, Part
from restate import RunOptions, TerminalError
from restate.ext.adk import RestatePlugin, RestateSessionService, restate_context, restate_object_context

APP_NAME = "agents"


async def final_response(events) -> str:  # type: ignore[no-untyped-def]
    text = ""
    async for event in events:
        if event.is_final_response() and event.content and event.content.parts:
            text = event.content.parts[0].text or text
    return text


# The template: a tool with a durable step, the Runner made per request.
async def get_weather(city: str) -> dict[str, object]:
    """Get the current weather for a given city."""

    async def call_weather_api(city: str) -> dict[str, object]:
        return {"temperature": 23, "description": "Sunny and warm."}

    return await restate_context().run_typed(f"Get weather {city}", call_weather_api, city=city)


weather_agent = Agent(
    model="gemini-2.5-flash",
    name="weather_agent",
    instruction="You are a helpful agent that provides weather updates.",
    tools=[get_weather],
)
weather_app = App(name=APP_NAME, root_agent=weather_agent, plugins=[RestatePlugin()])
session_service = InMemorySessionService()
agent_service = restate.Service("agent")


@agent_service.handler()
async def run(ctx: restate.Context, message: str) -> str:
    session_id = str(ctx.uuid())
    await session_service.create_session(app_name=APP_NAME, user_id="user", session_id=session_id)
    runner = Runner(app=weather_app, session_service=session_service)
    events = runner.run_async(
        user_id="user",
        session_id=session_id,
        new_message=Content(role="user", parts=[Part.from_text(text=message)]),
    )
    return await final_response(events)


# The chat: one Runner for the module, sessions kept in the Virtual Object's state.
assistant = Agent(model="gemini-2.5-flash", name="assistant", instruction="Be concise and helpful.")
chat_runner = Runner(
    app=App(name=APP_NAME, root_agent=assistant, plugins=[RestatePlugin()]),
    session_service=RestateSessionService(),
)
chat = restate.VirtualObject("Chat")


@chat.handler()
async def message(ctx: restate.ObjectContext, text: str) -> str:
    events = chat_runner.run_async(
        user_id=ctx.key(),
        session_id="session",
        new_message=Content(role="user", parts=[Part.from_text(text=text)]),
    )
    return await final_response(events)


# Parallel tools: one tool that runs three journaled steps at once.
async def check_fraud(claim: str) -> str:
    return "low risk"


async def check_cost(claim: str) -> str:
    return "reasonable"


async def calculate_metrics(claim: str) -> list[str]:
    """Calculate claim metrics in parallel durable steps."""
    ctx = restate_object_context()
    done = await restate.gather(
        ctx.run_typed("fraud", check_fraud, claim=claim),
        ctx.run_typed("cost", check_cost, claim=claim),
    )
    return [await result for result in done]


claims_agent = Agent(
    model="gemini-2.5-flash",
    name="parallel_tools_agent",
    instruction="Analyze the claim with your tools.",
    tools=[calculate_metrics],
)
run_options = RunOptions(max_attempts=3, initial_retry_interval=timedelta(seconds=1))
claims_app = App(name=APP_NAME, root_agent=claims_agent, plugins=[RestatePlugin(run_options=run_options)])
claims_runner = Runner(app=claims_app, session_service=RestateSessionService())
claims = restate.VirtualObject("ClaimAgent")


@claims.handler()
async def analyze(ctx: restate.ObjectContext, claim: str) -> str:
    try:
        events = claims_runner.run_async(
            user_id=ctx.key(),
            session_id="claims",
            new_message=Content(role="user", parts=[Part.from_text(text=f"Analyze the claim: {claim}")]),
        )
        return await final_response(events)
    except TerminalError:
        return "Sorry, I'm unable to process your request at the moment."
