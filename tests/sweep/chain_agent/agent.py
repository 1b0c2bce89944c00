"""A handler that asks the model and then calls another service of its app, which asks it too."""

from __future__ import annotations

import os

import httpx
import restate

helper = restate.Service("Helper")
front = restate.Service("Front")


async def ask(q: str) -> str:
    async with httpx.AsyncClient() as c:
        r = await c.post(
            f"{os.environ['OPENAI_BASE_URL']}/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": q}]},
        )
    return str(r.json()["choices"][0]["message"]["content"])


@helper.handler()
async def think(ctx: restate.Context, q: str) -> str:
    return await ask("think " + q)


@front.handler()
async def go(ctx: restate.Context, q: str) -> str:
    first = await ask("front " + q)
    second = await ctx.service_call(think, arg=first)
    return first + " / " + second


app = restate.app([helper, front])
