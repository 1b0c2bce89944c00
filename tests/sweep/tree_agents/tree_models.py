"""The model calls the tree agents make, with the `openai` client as people write them (pointed at the stub
by OPENAI_BASE_URL when swept)."""

from __future__ import annotations

import json
from typing import Any

from openai import AsyncOpenAI

client = AsyncOpenAI()

SPECIALISTS = ("billing", "support")
TRANSFER: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "transfer_to_agent",
            "description": "Hand the conversation to the specialist who can answer it.",
            "parameters": {
                "type": "object",
                "properties": {"agent": {"type": "string", "enum": list(SPECIALISTS)}},
                "required": ["agent"],
            },
        },
    }
]
PLAN: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "plan",
        "schema": {
            "type": "object",
            "properties": {
                "parts": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2}
            },
            "required": ["parts"],
        },
    },
}


async def route(question: str) -> str:
    """The triage agent's choice of specialist: its call of the transfer tool."""
    response = await client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": "You are a triage agent. Transfer the user to a specialist."},
            {"role": "user", "content": question},
        ],
        tools=TRANSFER,
    )
    calls = response.choices[0].message.tool_calls or []
    for call in calls:
        if call.type == "function" and call.function.name == "transfer_to_agent":
            agent = json.loads(call.function.arguments).get("agent")
            if agent in SPECIALISTS:
                return str(agent)
    return "support"


async def reply(system: str, question: str) -> str:
    response = await client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "system", "content": system}, {"role": "user", "content": question}],
    )
    return response.choices[0].message.content or ""


async def plan(task: str) -> list[str]:
    """The orchestrator's plan: the parts its workers write (structured output)."""
    response = await client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": f"Plan two parts of this text: {task}"}],
        response_format=PLAN,  # type: ignore[arg-type]
    )
    parts = json.loads(response.choices[0].message.content or "{}").get("parts", [])
    return [str(p) for p in parts]
