"""A checkout agent that loops on RT0016 with no kill at all, as seen in production.

It asks the model (outside the journal: the naive line), looks the order up in a journaled step, then, for an
order named "timeout...", fails its first attempt on a payment timeout, an ordinary transient error. The
retry asks the model again, and under the `changed` script the model now answers directly: the code returns
where the journal holds the lookup, a journal mismatch at index 1, and so on every attempt after, each one
paying for the model again, until the retry policy pauses it (CHECKOUT_MAX_ATTEMPTS, 14 by default).
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import httpx2
import restate

MODEL_URL = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")

checkout = restate.Service(
    "Checkout",
    invocation_retry_policy=restate.InvocationRetryPolicy(
        initial_interval=timedelta(milliseconds=300),
        exponentiation_factor=1.5,
        max_interval=timedelta(seconds=1),
        max_attempts=int(os.environ.get("CHECKOUT_MAX_ATTEMPTS", "14")),
        on_max_attempts="pause",
    ),
)
http = httpx2.AsyncClient(timeout=60.0)
_failed_once: set[str] = set()


async def ask(question: str) -> dict[str, Any]:
    response = await http.post(
        f"{MODEL_URL}/chat/completions",
        json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]},
    )
    response.raise_for_status()
    message: dict[str, Any] = response.json()["choices"][0]["message"]
    return message


async def lookup(order: str) -> dict[str, str]:
    return {"order": order, "amount": "42.00 EUR"}


@checkout.handler()
async def pay(ctx: restate.Context, order: str) -> str:
    plan = await ask(f"Should I look order {order} up before paying?")  # naive: outside the journal
    if not plan.get("tool_calls"):
        return str(plan.get("content") or "")
    found = await ctx.run_typed("lookup", lookup, order=order)
    invocation = ctx.request().id
    if order.startswith("timeout") and invocation not in _failed_once:
        _failed_once.add(invocation)
        raise TimeoutError("payment provider timed out")  # transient: Restate retries the invocation
    return f"paid {found['amount']}"


app = restate.app([checkout])
