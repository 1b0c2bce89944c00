"""An agent that speaks HTTP to the model over a bare socket: a client paidtwice does not follow."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.parse
from typing import Any

import restate

agent = restate.Service("RawSocketAgent")


async def chat(question: str) -> dict[str, Any]:
    url = urllib.parse.urlsplit(os.environ["OPENAI_BASE_URL"] + "/chat/completions")
    body = json.dumps({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]}).encode()
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    head = (
        f"POST {url.path} HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    writer.write(head.encode() + body)
    await writer.drain()
    raw = await reader.read()
    writer.close()
    message: dict[str, Any] = json.loads(raw.partition(b"\r\n\r\n")[2])["choices"][0]["message"]
    return message


@agent.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    return str((await chat(question))["content"])


app = restate.app([agent])
