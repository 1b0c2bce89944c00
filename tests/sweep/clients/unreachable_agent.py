"""An agent whose model client ignores OPENAI_BASE_URL: its calls never reach the stub."""

from __future__ import annotations

import os
from typing import Any

import httpx
import restate

# Reads a variable of its own (paidtwice does not set it) and falls back to a port nothing listens on.
MODEL_URL = os.environ.get("MY_MODEL_URL", "http://127.0.0.1:9/v1")
agent = restate.Service("UnreachableAgent")


@agent.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{MODEL_URL}/chat/completions",
            json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]},
        )
    reply: dict[str, Any] = response.json()["choices"][0]["message"]
    return str(reply["content"])


app = restate.app([agent])
