"""PT001: aiohttp.ClientSession instance methods and aiohttp.request inside handlers."""

import aiohttp
import restate
from restate import Context

feeds = restate.Service("Feeds")


@feeds.handler()
async def fetch_feed(ctx: Context, url: str) -> str:
    async with aiohttp.ClientSession() as session:
        async with session.get(url) as resp:  # expect: PT001
            body = await resp.text()
    return body


@feeds.handler()
async def publish(ctx: Context, item: dict) -> int:
    session = aiohttp.ClientSession()
    try:
        resp = await session.post("https://hub.example.com/publish", json=item)  # expect: PT001
        return resp.status
    finally:
        await session.close()


@feeds.handler()
async def head(ctx: Context, url: str) -> int:
    async with aiohttp.request("HEAD", url) as resp:  # expect: PT001
        return resp.status
