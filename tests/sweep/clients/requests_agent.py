"""A Restate agent whose model calls go through `requests`, made plainly in the handler (not journaled)."""

from __future__ import annotations

import json
import os
from typing import Any

import requests
import restate

BASE_URL = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
session = requests.Session()
agent = restate.Service("RequestsAgent")


def convert(amount: float, source: str, target: str) -> dict[str, Any]:
    return {"amount": round(amount * 1.08, 2), "currency": target}


@agent.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(5):
        response = session.post(
            f"{BASE_URL}/chat/completions",
            json={"model": "gpt-4o-mini", "messages": messages},
            headers={"authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', '')}"},
            timeout=120,
        )
        response.raise_for_status()
        reply = response.json()["choices"][0]["message"]
        if not reply.get("tool_calls"):
            return str(reply["content"])
        messages.append(reply)
        for call in reply["tool_calls"]:
            result = await ctx.run_typed("convert", convert, **json.loads(call["function"]["arguments"]))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
    return "gave up"


app = restate.app([agent])
