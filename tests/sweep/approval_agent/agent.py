"""Human approvals, as Restate's docs write them: a handler that asks the model, then waits for a person
through an awakeable (alone, or raced against a timeout), and a Workflow waiting on a durable promise its
shared handler resolves. Each has a naive twin whose model call before the approval is not journaled.
For `tests/sweep/test_sweep_approval.py`."""

from __future__ import annotations

import os
from datetime import timedelta

import httpx
import restate
from pydantic import BaseModel


class Decision(BaseModel):
    approved: bool
    reviewer: str


async def ask(question: str) -> str:
    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{os.environ['OPENAI_BASE_URL']}/chat/completions",
            json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]},
            headers={"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"},
        )
    return str(response.json()["choices"][0]["message"]["content"])


approval = restate.Service("Approval")


@approval.handler()
async def refund(ctx: restate.Context, request: str) -> str:
    draft = await ctx.run_typed("draft", ask, question=request)
    # The id goes to a person (an email, a Slack message); the handler waits for their decision.
    _, decision = ctx.awakeable(type_hint=Decision)
    verdict = await decision
    return f"{draft} ({'approved' if verdict.approved else 'denied'})"


@approval.handler()
async def refund_naive(ctx: restate.Context, request: str) -> str:
    draft = await ask(request)  # not journaled: paid again on every replay
    _, decision = ctx.awakeable(type_hint=Decision)
    verdict = await decision
    return f"{draft} ({'approved' if verdict.approved else 'denied'})"


def request_review(awakeable_id: str) -> str:
    """Stands for the email or Slack message carrying the id to a person."""
    return f"review requested: {awakeable_id}"


@approval.handler()
async def refund_reviewed(ctx: restate.Context, request: str) -> str:
    """Restate's example's shape: the awakeable made first, its id sent out by a step, then awaited."""
    draft = await ctx.run_typed("draft", ask, question=request)
    approval_id, decision = ctx.awakeable(type_hint=Decision)
    await ctx.run_typed("Request review", request_review, awakeable_id=approval_id)
    verdict = await decision
    return f"{draft} ({'approved' if verdict.approved else 'denied'})"


@approval.handler()
async def refund_reviewed_naive(ctx: restate.Context, request: str) -> str:
    draft = await ask(request)  # not journaled: paid again on every replay
    approval_id, decision = ctx.awakeable(type_hint=Decision)
    await ctx.run_typed("Request review", request_review, awakeable_id=approval_id)
    verdict = await decision
    return f"{draft} ({'approved' if verdict.approved else 'denied'})"


@approval.handler()
async def refund_by_noon(ctx: restate.Context, request: str) -> str:
    draft = await ctx.run_typed("draft", ask, question=request)
    _, decision = ctx.awakeable(type_hint=Decision)
    match await restate.select(decision=decision, timeout=ctx.sleep(timedelta(seconds=2))):
        case ["decision", verdict]:
            return f"{draft} ({'approved' if verdict.approved else 'denied'})"
        case _:
            return f"{draft} (no answer in time)"


@approval.handler()
async def refund_untyped(ctx: restate.Context, request: str) -> str:
    draft = await ctx.run_typed("draft", ask, question=request)
    _, decision = ctx.awakeable()
    return f"{draft} ({await decision})"


review = restate.Workflow("Review")


@review.main()
async def run(ctx: restate.WorkflowContext, request: str) -> str:
    draft = await ctx.run_typed("draft", ask, question=request)
    verdict = await ctx.promise("decision", type_hint=Decision).value()
    return f"{draft} ({'approved' if verdict.approved else 'denied'})"


@review.handler()
async def decide(ctx: restate.WorkflowSharedContext, decision: Decision) -> None:
    await ctx.promise("decision", type_hint=Decision).resolve(decision)


app = restate.app(services=[approval, review])
