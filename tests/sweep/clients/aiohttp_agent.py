"""A Restate agent whose model calls go through `aiohttp`."""

from __future__ import annotations

import json
import os
from typing import Any

import aiohttp
import restate

agent = restate.Service("AiohttpAgent")


async def chat(messages: list[dict[str, Any]]) -> dict[str, Any]:
    base_url = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    async with aiohttp.ClientSession() as session:
        async with session.post(
            f"{base_url}/chat/completions", json={"model": "gpt-4o-mini", "messages": messages}
        ) as response:
            response.raise_for_status()
            message: dict[str, Any] = (await response.json())["choices"][0]["message"]
            return message


def convert(amount: float, source: str, target: str) -> dict[str, Any]:
    return {"amount": round(amount * 1.08, 2), "currency": target}


@agent.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(5):
        reply = await chat(messages)
        if not reply.get("tool_calls"):
            return str(reply["content"])
        messages.append(reply)
        for call in reply["tool_calls"]:
            result = await ctx.run_typed("convert", convert, **json.loads(call["function"]["arguments"]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
    return "gave up"


app = restate.app([agent])
