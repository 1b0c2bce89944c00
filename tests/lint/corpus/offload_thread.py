"""PT001 through a worker thread: asyncio.to_thread(f) and loop.run_in_executor(None, f) run f now."""

import asyncio
import urllib.request

import requests
import restate

fetcher = restate.Service("Offload")


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url) as response:
        return response.read()


@fetcher.handler()
async def page(ctx: restate.Context, url: str) -> int:
    body = await asyncio.to_thread(fetch, url)  # expect: PT001
    loop = asyncio.get_running_loop()
    again = await loop.run_in_executor(None, requests.get, url)  # expect: PT001
    return len(body) + len(again.text)


@fetcher.handler()
async def page_journaled(ctx: restate.Context, url: str) -> int:
    body = await ctx.run_typed("fetch", fetch, url=url)
    return len(body)
