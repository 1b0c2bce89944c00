"""Reads outside handlers are not reported: module level, unreachable functions, undecorated ctx functions."""

import os
import random
import time
import uuid

import httpx
import restate
from restate import Context

API_KEY = os.environ["KEY"]
START = time.time()
INSTANCE = os.getenv("INSTANCE", str(uuid.uuid4()))
SEED = random.random()

inventory = restate.Service("Inventory")


def warm_cache() -> dict:
    return httpx.get("https://inventory.example.com/all", headers={"key": API_KEY}).json()


async def not_a_handler(ctx: Context, sku: str) -> float:
    return time.time() + httpx.get(f"https://inventory.example.com/{sku}").json()["qty"]


@inventory.handler()
async def count(ctx: Context, sku: str) -> dict:
    return {"sku": sku, "instance": INSTANCE, "up_since": START, "seed": SEED}


if __name__ == "__main__":
    print(warm_cache(), open("inventory.log").read(), time.monotonic())
