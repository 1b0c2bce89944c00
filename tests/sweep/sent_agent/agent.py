"""A desk (a Virtual Object, as Restate's interrupt-regenerate example has) that files a request and hands
it on, sent one-way, to a writer that first gathers for two seconds, then asks the model twice. The desk's
output is journaled long before the writer reaches its moments: the sweep still places them."""

from __future__ import annotations

import asyncio

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()


async def ask(prompt: str) -> str:
    response = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
    )
    return response.choices[0].message.content or ""


async def gather() -> str:
    await asyncio.sleep(2.0)
    return "notes"


writer = restate.Service("Writer")


@writer.handler()
async def write(ctx: restate.Context, request: str) -> str:
    notes = await ctx.run_typed("gather", gather)
    draft = await ctx.run_typed("draft", ask, prompt=f"draft {request} from {notes}")
    return await ctx.run_typed("polish", ask, prompt=f"polish {draft}")


desk = restate.VirtualObject("Desk")


@desk.handler()
async def file(ctx: restate.ObjectContext, request: str) -> None:
    ctx.set("last", request)
    ctx.service_send(write, arg=request)


app = restate.app(services=[desk, writer])
