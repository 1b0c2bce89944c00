"""A notes assistant as a Virtual Object: an eager state read, a model call over raw httpx outside the
journal, a durable pause, a journaled model call, a state write. Two one-message questions: a script's
positional turn 1 answers both."""

from __future__ import annotations

import os
from datetime import timedelta

import httpx
import restate

notes = restate.VirtualObject("Notes")


async def complete(prompt: str) -> str:
    base = os.environ["OPENAI_BASE_URL"].rstrip("/")
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(
            f"{base}/chat/completions",
            headers={"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"},
            json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": prompt}]},
        )
        response.raise_for_status()
        return str(response.json()["choices"][0]["message"]["content"])


@notes.handler()
async def add(ctx: restate.ObjectContext, note: str) -> str:
    summary = await ctx.get("summary") or ""
    tags = await complete(f"Tags for: {note}")
    await ctx.sleep(timedelta(seconds=1.5))
    new_summary = await ctx.run_typed("summarise", complete, prompt=f"{summary}\n{note}\n{tags}")
    ctx.set("summary", new_summary)
    return new_summary


app = restate.app([notes])
