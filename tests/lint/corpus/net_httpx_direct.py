"""PT001: module-level httpx functions called straight from a handler."""

import httpx
import restate
from restate import Context

search = restate.Service("Search")

API = "https://search.example.com"


@search.handler()
async def lookup(ctx: Context, query: str) -> dict:
    resp = httpx.get(f"{API}/q", params={"q": query})  # expect: PT001
    resp.raise_for_status()
    hits = resp.json()["hits"]
    httpx.post(f"{API}/log", json={"q": query, "n": len(hits)})  # expect: PT001
    return {"query": query, "hits": hits[:5]}


@search.handler()
async def probe(ctx: Context, url: str) -> int:
    response = httpx.request("HEAD", url, timeout=2.0)  # expect: PT001
    return response.status_code


app = restate.app(services=[search])
