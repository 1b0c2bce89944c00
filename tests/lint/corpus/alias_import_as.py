"""Aliases with `import X as Y`: httpx as h, datetime as dt, time as clock, os as system, secrets as sec."""

import datetime as dt
import os as system
import secrets as sec
import time as clock

import httpx as h
import restate
from restate import Context

notifier = restate.Service("Notifier")


@notifier.handler()
async def notify(ctx: Context, user: str, text: str) -> dict:
    sent_at = dt.datetime.now().isoformat()  # expect: PT002
    resp = h.post("https://push.example.com/send", json={"to": user, "text": text})  # expect: PT001
    return {"status": resp.status_code, "sent_at": sent_at}


@notifier.handler()
async def nonce(ctx: Context) -> str:
    started = clock.monotonic()  # expect: PT002
    value = sec.token_hex(8)  # expect: PT003
    return f"{value}-{started}-{system.getenv('NODE', 'n0')}"  # expect: PT004


@notifier.handler()
async def today(ctx: Context) -> str:
    return dt.date.today().isoformat()  # expect: PT002
