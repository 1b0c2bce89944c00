"""An agent that fails some invocations for good: every fifth one this process runs raises a TerminalError
after its first journaled model step, so it asks the model once where a clean run asks twice. The soak must
count those invocations lost, and not count the call they never made as a negative extra."""

from __future__ import annotations

import os
from typing import Any

import httpx2
import restate

MODEL_URL = os.environ["OPENAI_BASE_URL"]
agent = restate.Service(os.environ["PAIDTWICE_SERVICE"])
http = httpx2.AsyncClient(timeout=60.0)
handled = 0


@agent.handler()
async def run(ctx: restate.Context, question: str) -> str:
    global handled
    handled += 1
    number = handled  # taken now: the handlers run at once, and by the check below the count has moved on
    invocation = ctx.request().id

    async def think(messages: list[Any]) -> dict[str, Any]:
        response = await http.post(
            f"{MODEL_URL}/chat/completions",
            json={"model": "gpt-4o-mini", "messages": messages},
            headers={"x-paidtwice-invocation": invocation},
        )
        response.raise_for_status()
        message: dict[str, Any] = response.json()["choices"][0]["message"]
        return message

    messages: list[Any] = [{"role": "user", "content": question}]
    plan = await ctx.run_typed("think", think, messages=messages)
    if number % 5 == 0:  # the first, the soak's clean invocation, completes
        raise restate.TerminalError("the plan was rejected")
    answer = await ctx.run_typed("think", think, messages=[*messages, plan])
    return str(answer.get("content") or "")


app = restate.app([agent])
