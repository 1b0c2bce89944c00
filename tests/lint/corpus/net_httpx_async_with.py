"""PT001: httpx clients created inside the handler, with `async with`, `with` and plain assignment."""

import httpx
import restate
from restate import Context

scraper = restate.Service("Scraper")


@scraper.handler()
async def submit(ctx: Context, form: dict) -> int:
    async with httpx.AsyncClient(timeout=5.0) as c:
        resp = await c.post("https://forms.example.com/submit", json=form)  # expect: PT001
    return resp.status_code


@scraper.handler()
async def page(ctx: Context, url: str) -> str:
    with httpx.Client(follow_redirects=True) as client:
        return client.get(url).text  # expect: PT001


@scraper.handler()
async def stream_size(ctx: Context, url: str) -> int:
    client = httpx.AsyncClient()
    size = 0
    async with client.stream("GET", url) as resp:  # expect: PT001
        async for chunk in resp.aiter_bytes():
            size += len(chunk)
    await client.aclose()
    return size
