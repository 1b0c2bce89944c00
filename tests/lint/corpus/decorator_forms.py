"""Decorator forms: handler(), handler(name="x"), handler("x"), a bare Service import, any ctx name."""

import time

import httpx
from restate import Context, Service

greeter = Service("Greeter")


@greeter.handler()
async def hello(ctx: Context, name: str) -> str:
    return f"Hello {name} at {time.time()}"  # expect: PT002


@greeter.handler(name="goodbye")
async def bye(context: Context, name: str) -> str:
    resp = httpx.get(f"https://i18n.example.com/bye?name={name}")  # expect: PT001
    return resp.text


@greeter.handler("welcome")
async def welcome(c: Context, name: str) -> str:
    return f"Welcome {name}, it is {time.monotonic()}"  # expect: PT002


@greeter.handler(name="wave", inactivity_timeout=None)
async def wave(restate_ctx, name: str) -> str:
    return httpx.post("https://wave.example.com", json={"to": name}).text  # expect: PT001


async def undecorated(ctx: Context, name: str) -> str:
    return f"{name}: {time.time()}"
