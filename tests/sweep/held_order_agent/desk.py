"""A desk that calls a writer and an editor at once, each asking the model in steps: the writer drafts, then
polishes; the editor reviews. Marker files beside this module order their asks: in the first run the
editor asks once the draft is back and the writer polishes once the review is back (draft, review, polish);
in every later run the editor asks once the polish is back in its process, or 10 s passed (draft, polish,
review), as callees called at once race on a busy machine. For tests/sweep/test_held_call_order.py."""

from __future__ import annotations

import asyncio
from pathlib import Path

import restate
from openai import AsyncOpenAI

DRAFTED = Path(__file__).with_name("drafted")
FIRST_RUN_DONE = Path(__file__).with_name("first_run_done")

client = AsyncOpenAI()


async def ask(role: str, question: str) -> str:
    response = await client.chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": f"You are the {role}."},
            {"role": "user", "content": question},
        ],
    )
    return response.choices[0].message.content or ""


async def made(marker: Path) -> None:
    """Once `marker` exists (60 s at most)."""
    for _ in range(600):
        if marker.exists():
            return
        await asyncio.sleep(0.1)


polished = asyncio.Event()
"""The writer's polish came back in this process (a run's tree runs in its own process)."""


writer = restate.Service("Writer", ingress_private=True)
editor = restate.Service("Editor", ingress_private=True)


@writer.handler()
async def draft(ctx: restate.Context, question: str) -> str:
    drafted = await ctx.run_typed("draft", ask, role="writer", question=question)
    DRAFTED.touch()
    await made(FIRST_RUN_DONE)
    done = await ctx.run_typed("polish", ask, role="polisher", question=drafted)
    polished.set()
    return done


@editor.handler()
async def review(ctx: restate.Context, question: str) -> str:
    if FIRST_RUN_DONE.exists():
        try:  # a run holding the draft never polishes
            await asyncio.wait_for(polished.wait(), timeout=10.0)
        except TimeoutError:
            pass
    else:
        await made(DRAFTED)
    reviewed = await ctx.run_typed("review", ask, role="editor", question=question)
    FIRST_RUN_DONE.touch()
    return reviewed


desk = restate.Service("Desk")


@desk.handler()
async def answer(ctx: restate.Context, question: str) -> list[str]:
    calls = [ctx.service_call(draft, arg=question), ctx.service_call(review, arg=question)]
    await restate.gather(*calls)
    return [await call for call in calls]


app = restate.app([desk, writer, editor])
