"""A test agent whose replay under `changed` takes a shorter path than its clean run.

Clean: the model asks for a conversion, then for a tip, then answers (3 model calls, 2 journaled steps).
Under `changed`, a replay that asks turn 1 again is told the answer outright: 1 model call instead of 3
from there, and no step runs. The model call is made outside the journal, as in examples/travel_agent.
"""

from __future__ import annotations

import json
from typing import Any

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()


def _tool(name: str, description: str, **properties: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {key: {"type": kind} for key, kind in properties.items()},
                "required": list(properties),
            },
        },
    }


TOOLS: list[Any] = [
    _tool("convert", "Convert between currencies.", amount="number", source="string", target="string"),
    _tool("tip", "Add a tip to an amount.", amount="number", percent="number"),
]

trip = restate.Service("Trip")


async def ask(messages: list[dict[str, Any]]) -> dict[str, Any]:
    response = await client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    message: dict[str, Any] = response.choices[0].message.model_dump(exclude_none=True)
    return message


def convert(amount: float, source: str, target: str) -> dict[str, Any]:
    rate = {("EUR", "USD"): 1.08}[(source.upper(), target.upper())]
    return {"amount": round(amount * rate, 2), "currency": target.upper()}


def tip(amount: float, percent: float) -> dict[str, Any]:
    return {"amount": round(amount * (1 + percent / 100), 2)}


STEPS = {"convert": convert, "tip": tip}


@trip.handler()
async def plan(ctx: restate.Context, question: str) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(5):
        reply = await ask(messages)
        calls = reply.get("tool_calls") or []
        if not calls:
            return str(reply.get("content") or "")
        messages.append(reply)
        for call in calls:
            name = call["function"]["name"]
            arguments = json.loads(call["function"]["arguments"])
            result = await ctx.run_typed(name, STEPS[name], **arguments)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
    return "gave up after five model calls"


app = restate.app([trip])
