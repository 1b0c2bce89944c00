"""Recursive and mutually recursive helpers reaching httpx: lint terminates and reports the handler's call."""

import httpx
import restate
from restate import Context

crawler = restate.Service("Crawler")


def crawl(url: str, depth: int) -> list[str]:
    links = httpx.get(url).json().get("links", [])
    if depth <= 0:
        return links
    return links + [u for link in links for u in crawl(link, depth - 1)]


def ping_even(n: int) -> bool:
    return n == 0 or ping_odd(n - 1)


def ping_odd(n: int) -> bool:
    return n != 0 and (httpx.head("https://example.com").is_success or ping_even(n - 1))


@crawler.handler()
async def site_map(ctx: Context, root: str) -> list[str]:
    return crawl(root, depth=2)  # expect: PT001


@crawler.handler()
async def parity(ctx: Context, n: int) -> bool:
    return ping_even(n)  # expect: PT001
