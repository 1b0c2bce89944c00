"""A sub-workflow: a service handler starts a Restate Workflow's run (keyed by a uuid the handler's context
makes, the same on every replay) and waits for its result; the workflow drafts with the model, then
reviews its draft with the model. Every model call is a `ctx.run_typed` step."""

from __future__ import annotations

import restate
from tree_models import reply

publisher = restate.Service("Publisher")
article = restate.Workflow("Article")


@article.main()
async def draft(ctx: restate.WorkflowContext, topic: str) -> str:
    text = await ctx.run_typed("draft", reply, system="You draft short articles.", question=topic)
    return await ctx.run_typed("review", reply, system="You review a draft.", question=text)


@publisher.handler()
async def publish(ctx: restate.Context, topic: str) -> str:
    reviewed = await ctx.workflow_call(draft, key=str(ctx.uuid()), arg=topic)
    return f"published: {reviewed}"
