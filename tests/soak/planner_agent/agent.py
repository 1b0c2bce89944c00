"""A small journaled agent with one handler and no script of its own, as a user writes it with the `openai`
client: a tool loop, each model call and tool a step. The soak finds its handler and answers its model from
each request (auto answers)."""

from __future__ import annotations

import json
from typing import Any

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()

TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "minLength": 2}},
                "required": ["city"],
            },
        },
    }
]


def weather(city: str) -> str:
    return json.dumps({"city": city, "temperature": 18})


async def ask(messages: list[dict[str, Any]]) -> dict[str, Any]:
    response = await client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
    return response.choices[0].message.model_dump(exclude_none=True)


planner = restate.Service("Planner")


@planner.handler()
async def plan(ctx: restate.Context, city: str) -> str:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You plan a day out. Check the weather first."},
        {"role": "user", "content": f"A day out in {city}?"},
    ]
    for _ in range(4):
        message = await ctx.run_typed("model", ask, messages=messages)
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            return str(message.get("content") or "")
        for call in calls:
            arguments = json.loads(call["function"]["arguments"])
            result = await ctx.run_typed("weather", weather, city=str(arguments.get("city", city)))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return "no answer"


app = restate.app([planner])
