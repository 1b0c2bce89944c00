"""A module that does not use restate at all: `@router.handler()` here is not a Restate handler."""

import os
import time

import httpx


class Router:
    def __init__(self) -> None:
        self.routes: dict[str, object] = {}

    def handler(self, name: str | None = None):
        def register(fn):
            self.routes[name or fn.__name__] = fn
            return fn

        return register


router = Router()


@router.handler()
async def status(ctx: dict, service: str) -> dict:
    resp = httpx.get(f"https://status.example.com/{service}")
    return {"status": resp.json(), "at": time.time(), "env": os.getenv("ENV")}


class Cache:
    def load(self) -> str:
        with open("cache.json") as f:
            return f.read()
