"""Arguments of ctx.run_typed other than the action are evaluated in the handler: those calls are reported."""

import time
import uuid

import httpx
import restate
from restate import Context

tracker = restate.Service("Tracker")


async def post_event(event: dict, sent_at: float) -> int:
    resp = await httpx.AsyncClient().post("https://events.example.com", json={**event, "sent_at": sent_at})
    return resp.status_code


@tracker.handler()
async def track(ctx: Context, event: dict) -> int:
    return await ctx.run_typed("post", post_event, event=event, sent_at=time.time())  # expect: PT002


@tracker.handler()
async def track_named(ctx: Context, event: dict) -> int:
    return await ctx.run_typed(f"post-{uuid.uuid4()}", post_event, event=event, sent_at=0.0)  # expect: PT003
