"""An agent with a bug the soak must catch: it journals its model call, then asks the same question again
outside the journal (to read the answer's token usage, say). A clean run pays for that twice per turn, which
the clean count measures; every replay after a kill asks again for answers its journal already holds, which
no kill's bound allows for.
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from typing import Any

import httpx2
import restate

MODEL_URL = os.environ["OPENAI_BASE_URL"]
TOOLS_URL = os.environ["PAIDTWICE_TOOLS_URL"]
agent = restate.Service(os.environ["PAIDTWICE_SERVICE"])
http = httpx2.AsyncClient(timeout=60.0)


async def chat(messages: list[dict[str, Any]], invocation: str) -> dict[str, Any]:
    response = await http.post(
        f"{MODEL_URL}/chat/completions",
        json={"model": "gpt-4o-mini", "messages": messages},
        headers={"x-paidtwice-invocation": invocation},
    )
    response.raise_for_status()
    message: dict[str, Any] = response.json()["choices"][0]["message"]
    return message


async def get_weather(city: str, invocation: str) -> dict[str, Any]:
    response = await http.get(
        f"{TOOLS_URL}/weather", params={"city": city}, headers={"x-paidtwice-invocation": invocation}
    )
    response.raise_for_status()
    result: dict[str, Any] = response.json()
    return result


@agent.handler()
async def run(ctx: restate.Context, question: str) -> str:
    invocation = ctx.request().id
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    while True:
        reply = await ctx.run_typed("model", chat, messages=messages, invocation=invocation)
        await chat(messages, invocation)  # the bug: the same question again, outside the journal
        calls = reply.get("tool_calls") or []
        if not calls:
            return str(reply.get("content") or "")
        messages.append(reply)
        for call in calls:
            city = json.loads(call["function"]["arguments"])["city"]
            weather = await ctx.run_typed("weather", get_weather, city=city, invocation=invocation)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(weather)})
        await ctx.sleep(timedelta(seconds=2))


app = restate.app([agent])
