"""ctx.run / ctx.run_typed with a named module-level function (or a bare function reference): not reported."""

import time
import uuid

import httpx
import restate
from restate import Context, RunOptions

fetcher = restate.Service("Fetcher")


async def call_api(url: str, token: str) -> dict:
    resp = await httpx.AsyncClient().post(url, json={"token": token, "at": time.time()})
    return resp.json()


def fetch_sync(url: str) -> str:
    return httpx.get(url).text


@fetcher.handler()
async def fetch(ctx: Context, url: str) -> dict:
    data = await ctx.run_typed("call", call_api, url=url, token="t-1")
    page = await ctx.run("page", fetch_sync, args=(url,))
    retried = await ctx.run_typed("retried", fetch_sync, RunOptions(max_attempts=3), url)
    return {"data": data, "page": page, "retried": retried}


@fetcher.handler()
async def marks(ctx: Context) -> dict:
    started = await ctx.run_typed("started", time.time)
    request_id = await ctx.run("request id", uuid.uuid4)
    return {"started": started, "id": str(request_id)}
