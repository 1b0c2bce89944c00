"""A nested (async) def inside the handler passed to ctx.run_typed / ctx.run: its body is not reported."""

import datetime

import httpx
import restate
from restate import Context

tickets = restate.Service("Tickets")


@tickets.handler()
async def sync_issue(ctx: Context, issue_id: str) -> dict:
    async def fetch() -> dict:
        async with httpx.AsyncClient() as http:
            resp = await http.get(f"https://tracker.example.com/issues/{issue_id}")
        return resp.json()

    def stamp() -> str:
        return datetime.datetime.now().isoformat()

    issue = await ctx.run_typed("fetch", fetch)
    issue["synced_at"] = await ctx.run("stamp", stamp)
    return issue
