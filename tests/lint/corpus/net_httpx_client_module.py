"""PT001: a module-level httpx.AsyncClient / httpx.Client instance used inside handlers."""

import httpx
import restate
from restate import Context

tools = restate.Service("Tools")

http = httpx.AsyncClient(base_url="https://tools.example.com", timeout=10.0)
sync_http = httpx.Client(base_url="https://tools.example.com")


@tools.handler()
async def weather(ctx: Context, city: str) -> str:
    resp = await http.get("/weather", params={"city": city})  # expect: PT001
    return resp.json()["summary"]


@tools.handler()
async def translate(ctx: Context, text: str) -> str:
    resp = await http.post("/translate", json={"text": text, "to": "fr"})  # expect: PT001
    return resp.json()["text"]


@tools.handler()
async def ping(ctx: Context) -> bool:
    request = sync_http.build_request("GET", "/health")
    resp = sync_http.send(request)  # expect: PT001
    return resp.status_code == 200
