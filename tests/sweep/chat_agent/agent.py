"""A chat kept in a Virtual Object's state: each message is asked with the conversation so far, outside the
journal, and the answer is added to the state. For tests/sweep/test_sweep_state.py: the state seeded before
the sweep makes its clean run and every point the conversation's second message, not its first."""

from __future__ import annotations

import os
from typing import Any

import httpx
import restate

conversation = restate.VirtualObject("Conversation")
desk = restate.Service("Desk")


async def ask(messages: list[dict[str, Any]]) -> str:
    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{os.environ['OPENAI_BASE_URL']}/chat/completions",
            json={"model": "gpt-4o-mini", "messages": messages},
            headers={"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"},
        )
    return str(response.json()["choices"][0]["message"]["content"])


def note(text: str) -> str:
    return text.upper()


@conversation.handler()
async def say(ctx: restate.ObjectContext, question: str) -> str:
    history = await ctx.get("history", type_hint=list) or []
    asked = [*history, {"role": "user", "content": question}]
    answer = await ask(asked)
    noted = await ctx.run_typed("note", note, text=answer)
    ctx.set("history", [*asked, {"role": "assistant", "content": answer}])
    return f"message {len(history) // 2 + 1}: {noted}"


@desk.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    return await ask([{"role": "user", "content": question}])


app = restate.app([conversation, desk])
