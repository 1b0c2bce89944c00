"""Not decided, so no finding: an ADK app whose plugin is the project's own, as restatedev/ai-examples'
a2a/app/weather/agent.py (commit 91dec17) brings its own `RestatePlugin` (a2a/app/common/adk/), which does
journal each model call in a `ctx.run_typed` step. Lint cannot tell what a plugin it does not know does, so
it says so (`not decided`, on stderr) instead of passing or failing the run. Written after that file, not
copied."""

import restate
from google.adk import Runner
from google.adk.agents.llm_agent import Agent
from google.adk.apps import App
from google.adk.plugins import BasePlugin
from google.genai.types import Content, Part


class RestatePlugin(BasePlugin):
    """The project's own plugin (its before_model_callback would journal the call)."""

    def __init__(self) -> None:
        super().__init__(name="restate_plugin")


agent = Agent(model="gemini-2.5-flash", name="weather_agent", instruction="Give weather updates.")
app = App(name="agents", root_agent=agent, plugins=[RestatePlugin()])

weather = restate.VirtualObject("WeatherAgent")


@weather.handler()
async def run(ctx: restate.ObjectContext, prompt: str) -> str:
    runner = Runner(app=app)
    events = runner.run_async(
        user_id="user",
        session_id=ctx.key(),
        new_message=Content(role="user", parts=[Part.from_text(text=prompt)]),
    )
    text = ""
    async for event in events:
        if event.is_final_response() and event.content and event.content.parts:
            text = event.content.parts[0].text or text
    return text
