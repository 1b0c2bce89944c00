"""A refund desk that asks a person only about a customer's first refund: the customers already approved are
the desk's own records, a file outside Restate (`REFUND_RECORDS`). The first run waits for the approval; a run
after it finds the customer approved and goes on, so a moment inside that wait is never reached again. For
`tests/sweep/test_not_reached.py`."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import restate
from pydantic import BaseModel


class Decision(BaseModel):
    approved: bool


async def ask(question: str) -> str:
    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{os.environ['OPENAI_BASE_URL']}/chat/completions",
            json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]},
            headers={"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}"},
        )
    return str(response.json()["choices"][0]["message"]["content"])


def approved_before(customer: str) -> bool:
    """Whether the customer's first refund was approved already; records this one as the first otherwise."""
    records = Path(os.environ["REFUND_RECORDS"])
    if records.exists() and customer in records.read_text().split():
        return True
    with records.open("a") as file:
        file.write(customer + "\n")
    return False


desk = restate.Service("FirstRefund")


@desk.handler()
async def refund(ctx: restate.Context, customer: str) -> str:
    draft = await ctx.run_typed("draft", ask, question=f"Draft a refund for {customer}")
    if not await ctx.run_typed("approved before", approved_before, customer=customer):
        _, decision = ctx.awakeable(type_hint=Decision)
        if not (await decision).approved:
            return "refund declined"
    return draft


app = restate.app(services=[desk])
