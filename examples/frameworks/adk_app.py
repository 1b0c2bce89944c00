"""The travel agent on Google's ADK, in two forms: a `Runner` in a Restate handler (AdkPlain), and the same
agent in an `App` with Restate's `RestatePlugin` (AdkDurable), as `restate.ext.adk` documents it.

The tool is the same in both: its side effect is a journaled step (`restate_context().run_typed`).
RestatePlugin routes every model request through `ctx.run_typed`; the plain Runner makes it plainly.

The model is "gemini-2.5-flash", whose client (google-genai) reads GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY.

    paidtwice sweep --app adk_app:app --service AdkDurable --handler quote \\
        --input '"How much is 120 EUR in USD?"' --app-dir examples/frameworks
"""

from __future__ import annotations

import restate
from google.adk import Runner
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.sessions import InMemorySessionService
from google.genai.types import Content, Part
from restate.ext.adk import RestatePlugin, restate_context

RATES = {("EUR", "USD"): 1.08, ("USD", "EUR"): 0.93}
APP_NAME = "travel"


def _convert(amount: float, source: str, target: str) -> dict[str, float | str]:
    rate = RATES[(source.upper(), target.upper())]
    return {"amount": round(amount * rate, 2), "currency": target.upper()}


async def convert(amount: float, source: str, target: str) -> dict[str, float | str]:
    """Convert an amount between currencies."""
    return await restate_context().run_typed("convert", _convert, amount=amount, source=source, target=target)


travel_agent = LlmAgent(
    model="gemini-2.5-flash",
    name="travel_agent",
    instruction="Answer questions about prices abroad; convert currencies with the tool.",
    tools=[convert],
)
sessions = InMemorySessionService()
plain_runner = Runner(app=App(name=APP_NAME, root_agent=travel_agent), session_service=sessions)
durable_runner = Runner(
    app=App(name=APP_NAME, root_agent=travel_agent, plugins=[RestatePlugin()]), session_service=sessions
)

plain = restate.Service("AdkPlain")
durable = restate.Service("AdkDurable")


async def ask(ctx: restate.Context, runner: Runner, question: str) -> str:
    """One turn of a new session (its id from the journal, so a retry asks in the same one, made again only
    by a new process: a retry in this one finds it)."""
    session_id = str(ctx.uuid())
    if await sessions.get_session(app_name=APP_NAME, user_id="user", session_id=session_id) is None:
        await sessions.create_session(app_name=APP_NAME, user_id="user", session_id=session_id)
    answer = ""
    async for event in runner.run_async(
        user_id="user",
        session_id=session_id,
        new_message=Content(role="user", parts=[Part.from_text(text=question)]),
    ):
        if event.is_final_response() and event.content and event.content.parts:
            answer = event.content.parts[0].text or answer
    return answer


@plain.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    return await ask(ctx, plain_runner, question)


@durable.handler("quote")
async def durable_quote(ctx: restate.Context, question: str) -> str:
    return await ask(ctx, durable_runner, question)


app = restate.app([plain, durable])
