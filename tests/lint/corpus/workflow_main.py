"""Handlers on a Workflow: @wf.main() and @wf.handler(), with clean and naive calls."""

import datetime
import uuid

import restate
from anthropic import AsyncAnthropic
from restate import WorkflowContext, WorkflowSharedContext

onboarding = restate.Workflow("Onboarding")

claude = AsyncAnthropic()


async def welcome_text(name: str) -> str:
    messages = [{"role": "user", "content": f"Write a one-line welcome for {name}."}]
    msg = await claude.messages.create(model="claude-haiku-4-5", max_tokens=200, messages=messages)
    return msg.content[0].text


@onboarding.main()
async def run(ctx: WorkflowContext, name: str) -> dict:
    account_id = str(uuid.uuid4())  # expect: PT003
    text = await ctx.run_typed("welcome", welcome_text, name=name)
    await ctx.promise("verified").value()
    note = await welcome_text(f"{name} verified")  # expect: PT001
    return {"account": account_id, "text": text, "note": note}


@onboarding.handler()
async def verify(ctx: WorkflowSharedContext, code: str) -> str:
    await ctx.promise("verified").resolve(code)
    return datetime.datetime.utcnow().isoformat()  # expect: PT002
