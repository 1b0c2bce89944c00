"""Module-level clients bound with an annotation, and a client rebound from another module-level name."""

import httpx
import restate
from openai import AsyncOpenAI
from restate import Context

research = restate.Service("Research")

llm: AsyncOpenAI = AsyncOpenAI(timeout=30.0)
http: httpx.AsyncClient = httpx.AsyncClient(base_url="https://papers.example.com")


@research.handler()
async def find_papers(ctx: Context, topic: str) -> list[dict]:
    resp = await http.get("/search", params={"q": topic, "limit": 5})  # expect: PT001
    return resp.json()["papers"]


@research.handler()
async def abstract(ctx: Context, title: str) -> str:
    messages = [{"role": "user", "content": f"Write a 3-sentence abstract for '{title}'."}]
    out = await llm.chat.completions.create(model="gpt-4o-mini", messages=messages)  # expect: PT001
    return out.choices[0].message.content or ""
