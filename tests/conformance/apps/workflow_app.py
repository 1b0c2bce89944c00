"""The conformance corpus: a Workflow with every constructor, main and handler option of restate-sdk 1.3.0,
its durable promises (resolved, read, peeked at, rejected) and its state, and a Service that calls and sends
to Workflows. For tests/conformance."""

from __future__ import annotations

from datetime import timedelta

import restate
from model import ask, retries, traced

review = restate.Workflow(
    "Review",
    description="Drafts a review and keeps it.",
    metadata={"team": "conformance"},
    inactivity_timeout=timedelta(seconds=45),
    abort_timeout=timedelta(seconds=20),
    journal_retention=timedelta(hours=6),
    idempotency_retention=timedelta(hours=2),
    state_preload=True,
    ingress_private=False,
    invocation_retry_policy=retries(40),
    invocation_context_managers=[traced],
)
# A second workflow for the options the first cannot take with state_preload.
recheck = restate.Workflow("Recheck", enable_lazy_state=True)
reviews = restate.Service("Reviews")


@review.main(
    name="run",
    accept="application/json",
    content_type="application/json",
    input_serde=restate.serde.JsonSerde[str](),
    output_serde=restate.serde.JsonSerde[str](),
    metadata={"kind": "agent"},
    inactivity_timeout=timedelta(seconds=30),
    abort_timeout=timedelta(seconds=15),
    journal_retention=timedelta(hours=1),
    workflow_retention=timedelta(hours=1),
    enable_lazy_state=True,
    ingress_private=False,
    invocation_retry_policy=retries(30),
    invocation_context_managers=[traced],
)
async def run(ctx: restate.WorkflowContext, topic: str) -> str:
    draft = await ctx.run_typed("ask", ask, prompt=topic)
    ctx.set("draft", draft)
    drafted = ctx.promise("drafted", type_hint=str)
    await drafted.resolve(draft)
    kept = await drafted.value()
    await ctx.promise("withdrawn").reject("the review was kept")
    # Nobody has commented: a peek reads nothing and waits for nothing.
    await ctx.promise("comments", type_hint=str).peek()
    return kept


@review.handler(
    name="status",
    accept="application/json",
    content_type="application/json",
    input_serde=restate.serde.JsonSerde[str](),
    output_serde=restate.serde.JsonSerde[str](),
    metadata={"kind": "query"},
    inactivity_timeout=timedelta(seconds=30),
    abort_timeout=timedelta(seconds=15),
    journal_retention=timedelta(hours=1),
    idempotency_retention=timedelta(hours=1),
    state_preload=False,
    ingress_private=False,
    invocation_retry_policy=retries(30),
    invocation_context_managers=[traced],
)
async def status(ctx: restate.WorkflowSharedContext, field: str) -> str:
    return await ctx.get(field, type_hint=str) or ""


@reviews.handler()
async def start(ctx: restate.Context, topic: str) -> str:
    key = str(ctx.uuid())
    kept = await ctx.workflow_call(run, key=key, arg=topic)
    ctx.workflow_send(again, key=key, arg=kept)
    return kept


@recheck.main(state_preload=True)
async def again(ctx: restate.WorkflowContext, draft: str) -> str:
    ctx.set("draft", draft)
    return await ctx.run_typed("count", lambda: str(len(draft)))


@recheck.handler(enable_lazy_state=False)
async def seen(ctx: restate.WorkflowSharedContext, field: str) -> str:
    return await ctx.get(field, type_hint=str) or ""


app = restate.app([review, recheck, reviews])
