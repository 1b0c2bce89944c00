"""A helper that takes the context and journals its model call: calling it from a handler is not reported."""

import restate
from openai import AsyncOpenAI
from restate import Context

planner = restate.Service("Planner")

client = AsyncOpenAI()


async def call_model(prompt: str) -> str:
    messages = [{"role": "user", "content": prompt}]
    out = await client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    return out.choices[0].message.content or ""


async def journaled_ask(context: Context, step: str, prompt: str) -> str:
    return await context.run_typed(step, call_model, prompt=prompt)


@planner.handler()
async def plan(ctx: Context, goal: str) -> list[str]:
    outline = await journaled_ask(ctx, "outline", f"Outline steps for: {goal}")
    steps = [line for line in outline.splitlines() if line.strip()]
    detail = await journaled_ask(ctx, "detail", f"Expand the first step: {steps[0]}")
    return [detail, *steps[1:]]
