"""A Restate agent whose model calls go through the standard library's `urllib`, on a worker thread."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
from typing import Any

import restate

agent = restate.Service("UrllibAgent")


def chat(messages: list[dict[str, Any]]) -> dict[str, Any]:
    base_url = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps({"model": "gpt-4o-mini", "messages": messages}).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        message: dict[str, Any] = json.load(response)["choices"][0]["message"]
        return message


def convert(amount: float, source: str, target: str) -> dict[str, Any]:
    return {"amount": round(amount * 1.08, 2), "currency": target}


@agent.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(5):
        reply = await asyncio.to_thread(chat, messages)
        if not reply.get("tool_calls"):
            return str(reply["content"])
        messages.append(reply)
        for call in reply["tool_calls"]:
            result = await ctx.run_typed("convert", convert, **json.loads(call["function"]["arguments"]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
    return "gave up"


app = restate.app([agent])
