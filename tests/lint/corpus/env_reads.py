"""PT004: os.getenv, os.environ.get and os.environ["X"] reads in handlers (a write is not a read)."""

import os

import restate
from restate import Context

billing = restate.Service("Billing")


@billing.handler()
async def charge(ctx: Context, amount: int) -> dict:
    currency = os.getenv("CURRENCY", "EUR")  # expect: PT004
    region = os.environ.get("REGION")  # expect: PT004
    return {"amount": amount, "currency": currency, "region": region}


@billing.handler()
async def gateway(ctx: Context) -> str:
    return os.environ["PAYMENT_GATEWAY_URL"]  # expect: PT004


@billing.handler()
async def set_mode(ctx: Context, mode: str) -> str:
    os.environ["BILLING_MODE"] = mode
    return mode
