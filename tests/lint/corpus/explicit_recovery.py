"""Handlers under restate-sdk's preview explicit_recovery: a retry replays nothing, so a model call
journaled with ctx.run is paid again on every attempt (PT007). A handler without it is not reported for the
same line."""

import os

import httpx
import restate
from openai import AsyncOpenAI
from restate._preview import explicit_recovery

client = AsyncOpenAI()

wrapped = explicit_recovery(restate.Service("Wrapped"))
applied = restate.Service("Applied")
explicit_recovery(applied)
flagged = restate.Service("Flagged")
flagged.explicit_recovery = True
plain = restate.Service("Plain")
maybe = restate.Service("Maybe")
if os.environ.get("EXPLICIT") == "1":
    explicit_recovery(maybe)


async def ask(prompt: str) -> str:
    messages = [{"role": "user", "content": prompt}]
    out = await client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    return out.choices[0].message.content or ""


def now_text() -> str:
    import time

    return str(time.time())


@wrapped.handler()
async def on_wrapped(ctx: restate.Context, prompt: str) -> str:
    return await ctx.run_typed("model", ask, prompt=prompt)  # expect: PT007


@applied.handler()
async def on_applied(ctx: restate.Context, prompt: str) -> str:
    answer = await ctx.run_typed("model", ask, prompt=prompt)  # expect: PT007
    # A clock read inside an action is journaled; under explicit recovery it is read again, and no replay
    # compares it: not reported.
    stamp = await ctx.run_typed("stamp", now_text)
    return answer + stamp


@flagged.handler()
async def on_flagged(ctx: restate.Context, url: str) -> str:
    page = await ctx.run("fetch", lambda: httpx.get(url).text)  # expect: PT007
    return await ask(page)  # expect: PT001


@explicit_recovery
@plain.handler()
async def decorated(ctx: restate.Context, prompt: str) -> str:
    return await ctx.run_typed("model", ask, prompt=prompt)  # expect: PT007


@plain.handler()
async def journaled(ctx: restate.Context, prompt: str) -> str:
    return await ctx.run_typed("model", ask, prompt=prompt)


@maybe.handler()
async def decided_at_run_time(ctx: restate.Context, prompt: str) -> str:
    # Applied under an `if`: whether it holds is decided when the module runs, so lint does not guess.
    return await ctx.run_typed("model", ask, prompt=prompt)
