"""An agent on the Responses API offering the model two function tools and OpenAI's hosted `web_search`,
and waiting for a person's approval (an awakeable) before it books: what a sweep reaches of it, and what
not, is said after the sweep. For tests/sweep/test_sweep_coverage.py."""

from __future__ import annotations

import json
from typing import Any

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()
TOOLS: list[Any] = [
    {"type": "web_search"},
    *(
        {
            "type": "function",
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        }
        for name in ("lookup", "book")
    ),
]


async def ask(question: str) -> list[dict[str, Any]]:
    reply = await client.responses.create(
        model="gpt-4o-mini", input=question, tools=TOOLS, parallel_tool_calls=False
    )
    return [item.model_dump(exclude_none=True) for item in reply.output]


def act(name: str, arguments: str) -> str:
    return f"{name} done for {json.loads(arguments).get('city', '?')}"


trips = restate.Service("Trips")


@trips.handler()
async def plan(ctx: restate.Context, question: str) -> str:
    output = await ctx.run_typed("model", ask, question=question)
    done = []
    for item in output:
        if item.get("type") == "function_call":
            done.append(
                await ctx.run_typed(item["name"], act, name=item["name"], arguments=item["arguments"])
            )
    _, approval = ctx.awakeable(type_hint=str)
    approved = await approval
    return f"{'; '.join(done) or 'nothing to do'} ({approved})"


app = restate.app([trips])
