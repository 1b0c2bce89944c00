"""Handlers on a VirtualObject (from restate import VirtualObject), exclusive and shared."""

import time

import httpx
from restate import ObjectContext, ObjectSharedContext, VirtualObject

cart = VirtualObject("Cart")


@cart.handler()
async def add(ctx: ObjectContext, item: str) -> list[str]:
    items = await ctx.get("items") or []
    price = httpx.get(f"https://prices.example.com/{item}").json()["price"]  # expect: PT001
    items.append({"item": item, "price": price, "added": time.time()})  # expect: PT002
    ctx.set("items", items)
    return items


@cart.handler(kind="shared")
async def total(ctx: ObjectSharedContext) -> float:
    items = await ctx.get("items") or []
    rates = httpx.get("https://fx.example.com/latest").json()  # expect: PT001
    return sum(i["price"] for i in items) * rates.get("EUR", 1.0)


@cart.handler("clear")
async def clear(ctx: ObjectContext) -> None:
    ctx.clear("items")
