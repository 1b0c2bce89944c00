"""An agent written as people write them with the `openai` client, swept with no script (auto answers): a
tool loop whose tools take typed arguments (an enum, a bounded integer, a nested object), the model's tool
calls run in parallel when it asks for several, a typed input (a pydantic model). `run` journals each model
call and tool; `run_naive` makes them plainly."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import pydantic
import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()


class Trip(pydantic.BaseModel):
    city: str = pydantic.Field(min_length=2, max_length=40)
    nights: int = pydantic.Field(ge=1, le=14)
    budget: Literal["low", "mid", "high"] = "mid"


TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "minLength": 2},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city", "unit"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "hotels",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "stars": {"type": "integer", "minimum": 1, "maximum": 5},
                    "dates": {
                        "type": "object",
                        "properties": {"nights": {"type": "integer", "minimum": 1, "maximum": 14}},
                        "required": ["nights"],
                    },
                },
                "required": ["city", "stars", "dates"],
            },
        },
    },
]


def run_tool(tool: str, arguments: dict[str, Any]) -> str:
    if tool == "weather":
        return json.dumps({"city": arguments["city"], "temperature": 18, "unit": arguments["unit"]})
    return json.dumps({"hotels": [f"{arguments['stars']}-star in {arguments['city']}"]})


async def ask(messages: list[dict[str, Any]]) -> dict[str, Any]:
    response = await client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
    return response.choices[0].message.model_dump(exclude_none=True)


async def plan(
    trip: Trip,
    model: Callable[[list[dict[str, Any]]], Awaitable[dict[str, Any]]],
    tool: Callable[[str, dict[str, Any]], Awaitable[str]],
) -> str:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You plan trips. Use the tools."},
        {"role": "user", "content": f"Plan {trip.nights} nights in {trip.city}, {trip.budget} budget."},
    ]
    for _ in range(4):
        message = await model(messages)
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            return str(message.get("content") or "")
        for call in calls:
            result = await tool(call["function"]["name"], json.loads(call["function"]["arguments"]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return "no answer"


planner = restate.Service("Planner")


@planner.handler()
async def run(ctx: restate.Context, trip: Trip) -> str:
    async def tool(name: str, arguments: dict[str, Any]) -> str:
        return await ctx.run_typed(name, run_tool, tool=name, arguments=arguments)

    return await plan(trip, lambda m: ctx.run_typed("model", ask, messages=m), tool)


@planner.handler()
async def run_naive(ctx: restate.Context, trip: Trip) -> str:
    async def tool(name: str, arguments: dict[str, Any]) -> str:
        return run_tool(name, arguments)

    return await plan(trip, ask, tool)


app = restate.app([planner])
