"""A Virtual Object and a Workflow, each asking the model once outside the journal: keyed services for
`tests/sweep/test_sweep_keyed.py`. Each answer names the key it was called with."""

from __future__ import annotations

import os

import httpx
import restate

counter = restate.VirtualObject("Counter")
trip = restate.Workflow("Trip")


async def ask(question: str) -> str:
    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{os.environ['OPENAI_BASE_URL']}/chat/completions",
            json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]},
            headers={"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"},
        )
    return str(response.json()["choices"][0]["message"]["content"])


def note(text: str) -> str:
    return text.upper()


@counter.handler()
async def tally(ctx: restate.ObjectContext, question: str) -> str:
    answer = await ask(question)
    noted = await ctx.run_typed("note", note, text=answer)
    ctx.set("last", noted)
    return f"{ctx.key()}: {noted}"


@trip.main()
async def run(ctx: restate.WorkflowContext, question: str) -> str:
    answer = await ask(question)
    noted = await ctx.run_typed("note", note, text=answer)
    return f"{ctx.key()}: {noted}"


chat = restate.VirtualObject("Chat")


@chat.handler()
async def say(ctx: restate.ObjectContext, question: str) -> str:
    # A conversation kept in the object's state: read first, asked outside the journal, written back.
    history = await ctx.get("history", type_hint=list) or []
    answer = await ask(question)
    noted = await ctx.run_typed("note", note, text=answer)
    ctx.set("history", [*history, question, noted])
    return f"{ctx.key()}: {noted}"


rates = restate.Service("Rates")
desk = restate.Service("Desk")


@rates.handler()
async def rate(ctx: restate.Context, currency: str) -> float:
    return 1.08


@desk.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    # A tool that is a Restate service of its own, called between the model's answer and a step.
    answer = await ask(question)
    factor = await ctx.service_call(rate, arg="USD")
    noted = await ctx.run_typed("note", note, text=f"{answer} x{factor}")
    return f"desk: {noted}"


app = restate.app([counter, trip, chat, rates, desk])
