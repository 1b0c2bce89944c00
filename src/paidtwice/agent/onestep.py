"""A one-step agent for measuring what journaling a model call costs (bench/journal_overhead.py).

Its handler makes one model call, plainly (naive) or through `ctx.run_typed` (journaled), and returns how
long that step took as seen by the handler, so the journaling round trip is inside the figure.
"""

from __future__ import annotations

import os
import time
from typing import Any

import restate

from paidtwice.agent.weather import chat

JOURNALED = os.environ.get("PAIDTWICE_AGENT_MODE", "naive") == "journaled"
SERVICE = os.environ.get("PAIDTWICE_SERVICE", "OneStep")

one_step = restate.Service(SERVICE)


@one_step.handler()
async def run(ctx: restate.Context, question: str) -> dict[str, Any]:
    invocation = ctx.request().id
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    started = time.perf_counter()  # noqa: PT002 - the measurement itself, not a decision
    if JOURNALED:
        await ctx.run_typed("model", chat, messages=messages, invocation=invocation)
    else:
        await chat(messages, invocation)  # noqa: PT001 - the naive mode, measured on purpose
    return {"step_ms": (time.perf_counter() - started) * 1000.0}  # noqa: PT002


app = restate.app([one_step])
