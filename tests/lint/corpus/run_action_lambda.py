"""Lambdas passed as the action of ctx.run / ctx.run_typed: nothing inside them is reported."""

import os
import random
import time

import httpx
import restate
from restate import Context

quotes = restate.Service("Quotes")


@quotes.handler()
async def quote(ctx: Context, symbol: str) -> dict:
    now = await ctx.run("t", lambda: time.time())
    price = await ctx.run_typed("price", lambda: httpx.get(f"https://q.example.com/{symbol}").json()["p"])
    noise = await ctx.run("noise", lambda: random.gauss(0, 0.01))
    region = await ctx.run_typed("region", lambda: os.environ["REGION"])
    return {"symbol": symbol, "price": price * (1 + noise), "at": now, "region": region}


@quotes.handler()
async def banner(ctx: Context) -> str:
    return await ctx.run(
        "banner",
        lambda: open("banner.txt").read(),
    )
