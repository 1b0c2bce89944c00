"""Restate's notify-when-ready pattern, with the `openai` client: a Workflow whose run answers a question and
resolves a promise with the answer, and a shared handler that waits for that promise and mails it. The
shared handler cannot run without the workflow's run, so no sweep calls it alone. For
tests/sweep/test_sweep_shared.py."""

from __future__ import annotations

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()
notifier = restate.Workflow("Notifier")


async def ask(question: str) -> str:
    response = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": question}]
    )
    return str(response.choices[0].message.content)


def send_email(email: str, body: str) -> str:
    return f"sent to {email}: {len(body)} characters"


@notifier.main()
async def on_send(ctx: restate.WorkflowContext, question: str) -> str:
    answer = await ctx.run_typed("model", ask, question=question)
    await ctx.promise("agent_response", type_hint=str).resolve(answer)
    return answer


@notifier.handler()
async def on_notify(ctx: restate.WorkflowContext, email: str) -> str:
    response = await ctx.promise("agent_response", type_hint=str).value()
    return await ctx.run_typed("Email", send_email, email=email, body=response)


app = restate.app([notifier])
