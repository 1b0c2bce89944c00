"""One handler, the same model call made twice: journaled (not reported) and naive (reported)."""

import restate
from openai import AsyncOpenAI
from restate import Context

reviewer = restate.Service("Reviewer")

client = AsyncOpenAI()


async def call_model(prompt: str) -> str:
    messages = [{"role": "user", "content": prompt}]
    out = await client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    return out.choices[0].message.content or ""


@reviewer.handler()
async def review(ctx: Context, diff: str) -> dict:
    summary = await ctx.run_typed("summary", call_model, prompt=f"Summarize this diff:\n{diff}")
    verdict = await call_model(f"Approve or reject, given: {summary}")  # expect: PT001
    when = await ctx.time()
    return {"summary": summary, "verdict": verdict, "at": when}
