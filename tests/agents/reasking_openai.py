"""The reasking bug in an agent written as many are today: the `openai` client, the model call journaled in
a step of its own name ("ask_llm", not the deck's "model"), then asked again outside the journal. The soak
finds which steps hold the model's answers from what the stub answered, not from their names."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from typing import Any

import httpx2
import restate
from openai import AsyncOpenAI

client = AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="sk-paidtwice", max_retries=0)
tools = httpx2.AsyncClient(base_url=os.environ["PAIDTWICE_TOOLS_URL"], timeout=60.0)
agent = restate.Service(os.environ["PAIDTWICE_SERVICE"])
TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


@agent.handler()
async def run(ctx: restate.Context, question: str) -> str:
    headers = {"x-paidtwice-invocation": ctx.request().id}
    messages: list[Any] = [{"role": "user", "content": question}]

    async def ask_llm() -> dict[str, Any]:
        reply = await client.chat.completions.create(
            model="gpt-4o-mini", messages=messages, tools=TOOLS, extra_headers=headers
        )
        return reply.choices[0].message.model_dump(exclude_none=True)

    async def lookup_weather(city: str) -> dict[str, Any]:
        response = await tools.get("/weather", params={"city": city}, headers=headers)
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result

    while True:
        reply = await ctx.run_typed("ask_llm", ask_llm)
        await ask_llm()  # the bug: the same question again, outside the journal
        calls = reply.get("tool_calls") or []
        if not calls:
            return str(reply.get("content") or "")
        messages.append(reply)
        for call in calls:
            city = json.loads(call["function"]["arguments"])["city"]
            weather = await ctx.run_typed("lookup_weather", lookup_weather, city=city)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(weather)})
        await ctx.sleep(timedelta(seconds=2))


app = restate.app([agent])
