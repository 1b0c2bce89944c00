"""PT002: datetime.datetime.now/utcnow/today and datetime.date.today inside handlers."""

import datetime

import restate
from restate import Context

reports = restate.Service("Reports")


@reports.handler()
async def daily(ctx: Context, team: str) -> dict:
    now = datetime.datetime.now()  # expect: PT002
    return {"team": team, "generated": now.isoformat()}


@reports.handler()
async def stamp(ctx: Context, event: dict) -> dict:
    event["utc"] = datetime.datetime.utcnow().isoformat()  # expect: PT002
    event["local"] = datetime.datetime.today().isoformat()  # expect: PT002
    return event


@reports.handler()
async def due(ctx: Context, days: int) -> str:
    deadline = datetime.date.today() + datetime.timedelta(days=days)  # expect: PT002
    fixed = datetime.date(2025, 1, 1)
    return max(deadline, fixed).isoformat()
