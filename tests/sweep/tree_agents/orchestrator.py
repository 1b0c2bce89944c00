"""An orchestrator with workers (Anthropic's orchestrator-workers pattern) as Restate services: the
orchestrator asks the model for a plan (structured output: two parts), then calls a worker service per part,
all at once (`restate.gather`); each worker asks the model to write its part. Every model call is a
`ctx.run_typed` step."""

from __future__ import annotations

import restate
from tree_models import plan, reply

orchestrator = restate.Service("Orchestrator")
worker = restate.Service("Worker")


@worker.handler()
async def write(ctx: restate.Context, part: str) -> str:
    return await ctx.run_typed("write", reply, system="You write one part of a text.", question=part)


@orchestrator.handler()
async def run(ctx: restate.Context, task: str) -> list[str]:
    parts = await ctx.run_typed("plan", plan, task=task)
    # Each worker is told its place, so two parts alike are still two workers' own asks.
    calls = [ctx.service_call(write, arg=f"part {i} of {task!r}: {p}") for i, p in enumerate(parts, 1)]
    await restate.gather(*calls)
    return [await call for call in calls]
