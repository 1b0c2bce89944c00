"""A conversation kept in a Virtual Object's state, read and written around a journaled model call, served
with lazy state (`enable_lazy_state=True`: each read asks the server, a command and its completion in the
journal) and with eager state (the default: the state comes with the invocation, a read is one entry).
For tests/sweep/test_sweep_lazy_state.py."""

from __future__ import annotations

from typing import Any

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()


async def ask(messages: list[dict[str, Any]]) -> str:
    response = await client.chat.completions.create(model="gpt-4o-mini", messages=messages)  # type: ignore[arg-type]
    return str(response.choices[0].message.content)


def note(text: str) -> str:
    return text.upper()


async def say(ctx: restate.ObjectContext, question: str) -> str:
    history: list[dict[str, Any]] = await ctx.get("history", type_hint=list) or []
    turns = await ctx.get("turns", type_hint=int) or 0
    keys = await ctx.state_keys()
    messages = [*history, {"role": "user", "content": question}]
    answer = await ctx.run_typed("model", ask, messages=messages)
    noted = await ctx.run_typed("note", note, text=answer)
    ctx.set("history", [*messages, {"role": "assistant", "content": noted}])
    ctx.set("turns", turns + 1)
    return f"{ctx.key()} ({len(keys)} keys): {noted}"


lazy = restate.VirtualObject("LazyChat", enable_lazy_state=True)
eager = restate.VirtualObject("EagerChat")
lazy.handler("say")(say)
eager.handler("say")(say)

app = restate.app([lazy, eager])
