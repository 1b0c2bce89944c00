"""PT006: HTTP writes inside ctx.run actions, with and without an idempotency key."""

import functools

import httpx
import requests
import restate
from restate import Context

payments = restate.Service("Payments")

client = httpx.AsyncClient()


async def charge(amount: int) -> dict:
    response = await client.post("https://pay.example/charges", json={"amount": amount})
    return response.json()


async def charge_keyed(amount: int, key: str) -> dict:
    response = await client.post(
        "https://pay.example/charges", json={"amount": amount}, headers={"Idempotency-Key": key}
    )
    return response.json()


async def refund(charge_id: str, key: str) -> dict:
    headers = {"Content-Type": "application/json"}
    headers["idempotency-key"] = key
    async with httpx.AsyncClient() as session:
        response = await session.request("POST", f"https://pay.example/refunds/{charge_id}", headers=headers)
    return response.json()


def cancel(order: str) -> int:
    return requests.delete(f"https://shop.example/orders/{order}").status_code


def lookup(order: str) -> dict:
    return requests.get(f"https://shop.example/orders/{order}").json()


async def update(order: str) -> int:
    async with httpx.AsyncClient() as session:
        response = await session.request("PATCH", f"https://shop.example/orders/{order}", json={"x": 1})
    return response.status_code


@payments.handler()
async def pay(ctx: Context, amount: int) -> dict:
    first = await ctx.run_typed("charge", charge, amount=amount)  # expect: PT006
    key = f"{ctx.request().id}:charge"
    second = await ctx.run_typed("charge keyed", charge_keyed, amount=amount, key=key)
    third = await ctx.run_typed("refund", refund, charge_id=first["id"], key=key)
    return {"first": first, "second": second, "third": third}


@payments.handler()
async def orders(ctx: Context, order: str) -> int:
    await ctx.run("cancel", functools.partial(cancel, order))  # expect: PT006
    await ctx.run_typed("lookup", lookup, order=order)
    url = f"https://shop.example/orders/{order}"
    await ctx.run("put", lambda: httpx.put(url).status_code)  # expect: PT006
    return await ctx.run_typed("update", update, order=order)  # expect: PT006


@payments.handler()
async def silenced(ctx: Context, amount: int) -> dict:
    return await ctx.run_typed("charge", charge, amount=amount)  # noqa: PT006


async def ask_model(prompt: str) -> dict:
    response = await client.post(f"{BASE}/chat/completions", json={"messages": [prompt]})
    return response.json()


BASE = "https://api.openai.com/v1"


@payments.handler()
async def model_step(ctx: Context, prompt: str) -> dict:
    # A model call changes nothing on the other side: journaling it is the fix (PT001), not a key.
    return await ctx.run_typed("ask", ask_model, prompt=prompt)
