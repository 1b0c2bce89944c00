"""A tool loop on Google's Gemini API through the google-genai client (as Google's ADK calls it), whole and
streamed, the model asking for two tools in one answer; each tool call is a journaled step. The client
reads GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY, which paidtwice points at its stub. For
tests/sweep/test_sweep_answers.py."""

from __future__ import annotations

from typing import Any

import restate
from google import genai
from google.genai import types

WEATHER = {"Paris": "sunny, 18 degrees", "Rome": "cloudy, 21 degrees"}
TOOL = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="weather",
            description="The weather in a city.",
            parameters=types.Schema(
                type=types.Type.OBJECT,
                properties={"city": types.Schema(type=types.Type.STRING)},
                required=["city"],
            ),
        )
    ]
)
CONFIG = types.GenerateContentConfig(
    tools=[TOOL], automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)
)


def weather(city: str) -> str:
    return WEATHER.get(city, "unknown")


async def results(ctx: restate.Context, calls: list[types.FunctionCall]) -> types.Content:
    parts = []
    for call in calls:
        city = str((call.args or {})["city"])
        found = await ctx.run_typed(f"weather {city}", weather, city=city)
        parts.append(types.Part.from_function_response(name=str(call.name), response={"result": found}))
    return types.Content(role="user", parts=parts)


gemini = restate.Service("GeminiTools")
streamed = restate.Service("GeminiStreamed")


@gemini.handler()
async def ask(ctx: restate.Context, question: str) -> str:
    client = genai.Client()
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=question)])]
    for _ in range(5):
        reply = await client.aio.models.generate_content(
            model="gemini-2.5-flash", contents=contents, config=CONFIG
        )
        if not reply.function_calls:
            return str(reply.text)
        assert reply.candidates and reply.candidates[0].content
        contents += [reply.candidates[0].content, await results(ctx, reply.function_calls)]
    return "too many rounds"


@streamed.handler("ask")
async def ask_streamed(ctx: restate.Context, question: str) -> str:
    client = genai.Client()
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=question)])]
    for _ in range(5):
        text, calls, parts = "", [], []
        stream = await client.aio.models.generate_content_stream(
            model="gemini-2.5-flash", contents=contents, config=CONFIG
        )
        async for chunk in stream:
            text += chunk.text or ""
            calls += chunk.function_calls or []
            if chunk.candidates and chunk.candidates[0].content:
                parts += chunk.candidates[0].content.parts or []
        if not calls:
            return text
        contents += [types.Content(role="model", parts=parts), await results(ctx, calls)]
    return "too many rounds"


app = restate.app([gemini, streamed])
