"""An expense desk that journals every model call and step, and whose path depends on the model's answer:
"approve" reimburses (one step), "reject" files a note, has the model draft a letter and sends it (two steps
and a model call more). Under the `changed` variation the call cut off in flight is answered the other way
when asked again, so the replay takes the other path: new work, not work paid twice. `claim_naive` makes
its model calls outside the journal, so an answer that had come back is asked for again after a kill. For
tests/sweep/test_sweep_paths.py."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()


class Claim(pydantic.BaseModel):
    amount: int = pydantic.Field(ge=1, le=5000)
    currency: str = pydantic.Field(min_length=3, max_length=3)


TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {"reason": {"type": "string"}},
                "required": ["reason"],
            },
        },
    }
    for name in ("approve", "reject")
]


async def ask(messages: list[dict[str, Any]], tools: bool) -> dict[str, Any]:
    response = await client.chat.completions.create(  # type: ignore[call-overload]
        model="gpt-4o-mini",
        messages=messages,
        **({"tools": TOOLS, "parallel_tool_calls": False} if tools else {}),
    )
    message: dict[str, Any] = response.choices[0].message.model_dump(exclude_none=True)
    return message


def reimburse(amount: int) -> str:
    return f"paid {amount} EUR"


def file_note(reason: str) -> str:
    return f"rejected: {reason}"


def send_letter(text: str) -> str:
    return f" (letter sent: {len(text)} characters)"


desk = restate.Service("ExpenseDesk")


@desk.handler()
async def claim(ctx: restate.Context, claim: Claim) -> str:
    return await review(ctx, claim, journaled=True)


@desk.handler()
async def claim_naive(ctx: restate.Context, claim: Claim) -> str:
    return await review(ctx, claim, journaled=False)


async def review(ctx: restate.Context, claim: Claim, *, journaled: bool) -> str:
    async def model(name: str, messages: list[dict[str, Any]], tools: bool) -> dict[str, Any]:
        if journaled:
            return await ctx.run_typed(name, ask, messages=messages, tools=tools)
        return await ask(messages, tools)

    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You review expense claims. Approve or reject."},
        {"role": "user", "content": f"Claim {claim.amount} {claim.currency} for a train ticket."},
    ]
    message = await model("review", messages, tools=True)
    messages.append(message)
    for call in message.get("tool_calls") or []:
        reason = json.loads(call["function"]["arguments"]).get("reason", "")
        if call["function"]["name"] == "approve":
            result = await ctx.run_typed("Reimburse", reimburse, amount=claim.amount)
        else:
            result = await ctx.run_typed("File note", file_note, reason=reason)
            letter = [{"role": "user", "content": f"Draft a letter rejecting a claim: {reason}"}]
            drafted = await model("draft", letter, tools=False)
            result += await ctx.run_typed("Send letter", send_letter, text=str(drafted.get("content")))
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    final = await model("summary", messages, tools=False)
    return str(final.get("content") or "")


app = restate.app([desk])
