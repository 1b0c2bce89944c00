"""An agent whose journal depends on ctx.uuid(), ctx.random() and ctx.time(): a replay with the wrong seed
names its step differently and mismatches, and its output holds all three values."""

from __future__ import annotations

import os

import restate

seeded = restate.Service(os.environ.get("PAIDTWICE_SEEDED_SERVICE", "Seeded"))


def _done() -> str:
    return "done"


@seeded.handler()
async def run(ctx: restate.Context, question: str) -> str:
    token = ctx.uuid()
    draw = ctx.random().random()
    now = await ctx.time()
    answer = await ctx.run_typed(f"step-{token.hex[:8]}", _done)
    return f"{question} {token} {draw:.12f} {now:.3f} {answer}"


app = restate.app([seeded])
