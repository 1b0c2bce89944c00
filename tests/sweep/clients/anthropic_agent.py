"""A Restate agent on the official `anthropic` client (Messages API, tool use), reading ANTHROPIC_BASE_URL."""

from __future__ import annotations

from typing import Any

import anthropic
import restate

client = anthropic.AsyncAnthropic()
agent = restate.Service("AnthropicAgent")

TOOLS: list[Any] = [
    {
        "name": "convert",
        "description": "Convert an amount between currencies.",
        "input_schema": {
            "type": "object",
            "properties": {
                "amount": {"type": "number"},
                "source": {"type": "string"},
                "target": {"type": "string"},
            },
            "required": ["amount", "source", "target"],
        },
    }
]


def convert(amount: float, source: str, target: str) -> dict[str, Any]:
    return {"amount": round(amount * 1.08, 2), "currency": target}


@agent.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    messages: list[Any] = [{"role": "user", "content": question}]
    for _ in range(5):
        reply = await client.messages.create(
            model="claude-sonnet-4-5", max_tokens=1024, messages=messages, tools=TOOLS
        )
        uses = [block for block in reply.content if block.type == "tool_use"]
        if not uses:
            return "".join(block.text for block in reply.content if block.type == "text")
        messages.append({"role": "assistant", "content": [b.model_dump() for b in reply.content]})
        results = []
        for use in uses:
            result = await ctx.run_typed("convert", convert, **dict(use.input))
            results.append({"type": "tool_result", "tool_use_id": use.id, "content": str(result)})
        messages.append({"role": "user", "content": results})
    return "gave up"


app = restate.app([agent])
