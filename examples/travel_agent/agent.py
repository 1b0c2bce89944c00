"""A small travel agent written with the official `openai` client, for `paidtwice sweep --app`.

It answers "what does this cost in my currency?": the model asks for a conversion, the `convert` tool runs as
a journaled step (`ctx.run_typed`), the model writes the answer. The model call itself is made plainly,
outside the journal, so a crash after it returned pays for it again on replay: the sweep shows where, and
`paidtwice lint` points at the line. Wrapping `ask` in `ctx.run_typed("ask", ask, messages=messages)` fixes
both.

The client reads OPENAI_BASE_URL and OPENAI_API_KEY from the environment; paidtwice points them at its stub.

    paidtwice sweep --app agent:app --service Travel --handler quote \\
        --input '"How much is 120 EUR in USD?"' --script examples/travel_agent/script.toml \\
        --app-dir examples/travel_agent
"""

from __future__ import annotations

import json
from typing import Any

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()

RATES = {("EUR", "USD"): 1.08, ("USD", "EUR"): 0.93, ("EUR", "GBP"): 0.85}

TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "convert",
            "description": "Convert an amount between currencies.",
            "parameters": {
                "type": "object",
                "properties": {
                    "amount": {"type": "number"},
                    "source": {"type": "string"},
                    "target": {"type": "string"},
                },
                "required": ["amount", "source", "target"],
            },
        },
    }
]

travel = restate.Service("Travel")


async def ask(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """One chat-completions call; returns the assistant message as a plain dict."""
    response = await client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    message: dict[str, Any] = response.choices[0].message.model_dump(exclude_none=True)
    return message


def convert(amount: float, source: str, target: str) -> dict[str, Any]:
    """The conversion tool: a local computation, journaled as a step."""
    rate = RATES[(source.upper(), target.upper())]
    return {"amount": round(amount * rate, 2), "currency": target.upper(), "rate": rate}


@travel.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for _ in range(5):
        reply = await ask(messages)
        calls = reply.get("tool_calls") or []
        if not calls:
            return str(reply.get("content") or "")
        messages.append(reply)
        for call in calls:
            arguments = json.loads(call["function"]["arguments"])
            result = await ctx.run_typed("convert", convert, **arguments)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
    return "gave up after five model calls"


app = restate.app([travel])
