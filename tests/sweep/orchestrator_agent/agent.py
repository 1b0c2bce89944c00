"""A test agent whose script answers several calls with one turn: an orchestrator plans three subtasks and a
worker writes each (Anthropic's orchestrator-workers pattern).

The workers' prompts differ only by their subtask, and one `[[turn]]` (`when = "^Write the part"`) answers
them all, so the stub must count each worker's asks apart: asked for the first time, a worker is not another
worker asked again. `run` journals every call and runs the workers at once (`restate.gather`); `run_in_turn`
makes every call outside the journal, one worker after the other.
"""

from __future__ import annotations

import re

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()

PLAN = "Plan the parts of this text, one <part> tag each:\n\n{task}"
WORKER = "Write the part '{part}' of this text:\n\n{task}"

orchestrator = restate.Service("Orchestrator")


async def ask(prompt: str) -> str:
    response = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
    )
    return response.choices[0].message.content or ""


def parts(plan: str) -> list[str]:
    return re.findall(r"<part>(.*?)</part>", plan)


@orchestrator.handler()
async def run(ctx: restate.Context, task: str) -> list[str]:
    """Every call journaled; the workers in flight at once."""
    plan = await ctx.run_typed("plan", ask, prompt=PLAN.format(task=task))
    workers = [
        ctx.run_typed(f"write {part}", ask, prompt=WORKER.format(part=part, task=task))
        for part in parts(plan)
    ]
    await restate.gather(*workers)
    return [await worker for worker in workers]


@orchestrator.handler()
async def run_in_turn(ctx: restate.Context, task: str) -> list[str]:
    """Every call outside the journal; one worker after the other."""
    plan = await ask(PLAN.format(task=task))
    return [await ask(WORKER.format(part=part, task=task)) for part in parts(plan)]


app = restate.app([orchestrator])
