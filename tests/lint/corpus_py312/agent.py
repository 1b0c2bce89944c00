"""Valid Python 3.12 (PEP 701: an f-string nesting its own quotes), with one call a replay pays again."""

import httpx
import restate

agent = restate.Service("Agent")


@agent.handler()
async def run(ctx: restate.Context, order: dict[str, str]) -> str:
    summary = f"order {order["id"]} for {order["name"]}"
    async with httpx.AsyncClient() as client:
        reply = await client.post("https://api.example.com/v1/chat", json={"q": summary})  # lint: PT001
    return reply.text
