"""ctx.time(), ctx.uuid(), ctx.random() and ctx.sleep() are journaled: not reported."""

import datetime
from datetime import timedelta

import restate
from restate import Context

retry = restate.Service("Retry")


@retry.handler()
async def backoff(ctx: Context, attempts: int) -> dict:
    started = await ctx.time()
    attempt_id = ctx.uuid()
    rng = ctx.random()
    delays = []
    for n in range(attempts):
        delay = min(30.0, (2**n) * (0.5 + ctx.random().random()))
        delays.append(delay + rng.uniform(0, 0.1))
        await ctx.sleep(timedelta(seconds=delay))
    coin = rng.choice(["heads", "tails"])
    when = datetime.datetime.fromtimestamp(started, tz=datetime.UTC)
    return {"id": str(attempt_id), "delays": delays, "coin": coin, "from": when.isoformat()}
