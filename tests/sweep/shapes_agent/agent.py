"""The shapes a model call outside the journal takes, each beside its journaled twin, for comparing what a
sweep finds in process (`--app`) and by command (`--cmd`, hypercorn on $PORT, seen only on the wire).

Each handler's prompt starts with its shape's word, so the script file answers it by `when`. The naive
handlers make one model call plainly where their twins make it in `ctx.run_typed`; the steps around it are
journaled in both: a tool, a step that calls no model, tools run at once, and journaled calls around it.
"""

from __future__ import annotations

import json
from typing import Any

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()

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
RATES = {("EUR", "USD"): 1.08, ("EUR", "GBP"): 0.85}

shapes = restate.Service("Shapes")


async def ask(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """One chat-completions call; the assistant message as a plain dict."""
    response = await client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    message: dict[str, Any] = response.choices[0].message.model_dump(exclude_none=True)
    return message


async def ask_text(prompt: str) -> str:
    response = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
    )
    return response.choices[0].message.content or ""


async def ask_streamed(prompt: str) -> str:
    """One streamed call, its text put together from the chunks."""
    stream = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}], stream=True
    )
    return "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])


def convert(amount: float, source: str, target: str) -> dict[str, Any]:
    rate = RATES[(source.upper(), target.upper())]
    return {"amount": round(amount * rate, 2), "currency": target.upper()}


def stamp(text: str) -> dict[str, int]:
    """A step that calls no model and keeps nothing of the answer: a count."""
    return {"words": len(text.split())}


async def tool_loop(ctx: restate.Context, question: str, journaled: bool, together: bool) -> str:
    """Ask, run the tools the model chose as journaled steps (one after another, or at once), ask again."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for turn in range(1, 4):
        reply = await (ctx.run_typed(f"ask {turn}", ask, messages=messages) if journaled else ask(messages))
        calls = reply.get("tool_calls") or []
        if not calls:
            return str(reply.get("content") or "")
        messages.append(reply)
        arguments = [json.loads(call["function"]["arguments"]) for call in calls]
        if together:
            futures = [ctx.run_typed(f"convert {i}", convert, **a) for i, a in enumerate(arguments)]
            await restate.gather(*futures)
            results = [await future for future in futures]
        else:
            results = [await ctx.run_typed("convert", convert, **a) for a in arguments]
        for call, result in zip(calls, results, strict=True):
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)})
    return "gave up"


@shapes.handler()
async def tool_after_call(ctx: restate.Context, question: str) -> str:
    return await tool_loop(ctx, f"TOOL {question}", journaled=False, together=False)


@shapes.handler()
async def tool_after_call_journaled(ctx: restate.Context, question: str) -> str:
    return await tool_loop(ctx, f"TOOL {question}", journaled=True, together=False)


@shapes.handler()
async def tools_together(ctx: restate.Context, question: str) -> str:
    return await tool_loop(ctx, f"PARALLEL {question}", journaled=False, together=True)


@shapes.handler()
async def tools_together_journaled(ctx: restate.Context, question: str) -> str:
    return await tool_loop(ctx, f"PARALLEL {question}", journaled=True, together=True)


@shapes.handler()
async def step_after_call(ctx: restate.Context, question: str) -> str:
    text = await ask_text(f"STEP {question}")
    await ctx.run_typed("stamp", stamp, text=text)
    return text


@shapes.handler()
async def step_after_call_journaled(ctx: restate.Context, question: str) -> str:
    text = await ctx.run_typed("ask", ask_text, prompt=f"STEP {question}")
    await ctx.run_typed("stamp", stamp, text=text)
    return text


@shapes.handler()
async def between(ctx: restate.Context, question: str) -> str:
    """A plain call between two journaled ones."""
    first = await ctx.run_typed("first", ask_text, prompt=f"BETWEEN first: {question}")
    second = await ask_text(f"BETWEEN second: {first}")
    return await ctx.run_typed("third", ask_text, prompt=f"BETWEEN third: {second}")


@shapes.handler()
async def streamed(ctx: restate.Context, question: str) -> str:
    text = await ask_streamed(f"STREAM {question}")
    await ctx.run_typed("stamp", stamp, text=text)
    return text


@shapes.handler()
async def streamed_journaled(ctx: restate.Context, question: str) -> str:
    text = await ctx.run_typed("ask", ask_streamed, prompt=f"STREAM {question}")
    await ctx.run_typed("stamp", stamp, text=text)
    return text


@shapes.handler()
async def workflow_parallel(ctx: restate.Context, question: str) -> str:
    """Three journaled calls at once, then a fourth that combines them."""
    futures = [
        ctx.run_typed(f"view {n}", ask_text, prompt=f"VIEW {n}: {question}") for n in ("one", "two", "three")
    ]
    await restate.gather(*futures)
    views = [await future for future in futures]
    return await ctx.run_typed("combine", ask_text, prompt="COMBINE: " + " | ".join(views))


app = restate.app([shapes])
