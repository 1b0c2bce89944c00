"""Handlers whose inputs and outputs are of every kind restate-sdk 1.3.0's serde takes, each asking the model
once through the stub: a dataclass (the SDK's manifest gives no schema for it), a TypedDict, a msgspec
Struct, an optional and a union, lists and dicts, bytes with their content type, no input, None and empty
outputs. Beside them: a Workflow whose input is a dataclass, a state read that calls no model, and a handler
that refuses every input it is given."""

from __future__ import annotations

import dataclasses
from typing import TypedDict

import msgspec
import restate
from openai import AsyncOpenAI
from pydantic import BaseModel, field_validator
from restate.serde import BytesSerde

client = AsyncOpenAI()


async def ask(prompt: str) -> str:
    response = await client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]
    )
    return response.choices[0].message.content or ""


@dataclasses.dataclass
class Trip:
    city: str
    nights: int


class Order(TypedDict):
    item: str
    count: int


class Parcel(msgspec.Struct):
    weight: float
    fragile: bool


class Customer(BaseModel):
    name: str

    @field_validator("name")
    @classmethod
    def known(cls, name: str) -> str:
        raise ValueError(f"no customer {name!r}")


kinds = restate.Service("Kinds")


@kinds.handler()
async def trip(ctx: restate.Context, trip: Trip) -> str:
    # The SDK hands a dataclass's input over as the JSON it parsed.
    return await ctx.run_typed("ask", ask, prompt=f"plan {trip}")


@kinds.handler()
async def order(ctx: restate.Context, order: Order) -> dict[str, str]:
    return {"reply": await ctx.run_typed("ask", ask, prompt=f"order {order['item']} x{order['count']}")}


@kinds.handler()
async def parcel(ctx: restate.Context, parcel: Parcel) -> Parcel:
    await ctx.run_typed("ask", ask, prompt=f"ship {parcel.weight} kg")
    return parcel


@kinds.handler()
async def maybe(ctx: restate.Context, note: str | None) -> list[str]:
    return [await ctx.run_typed("ask", ask, prompt=f"note {note}")]


@kinds.handler()
async def either(ctx: restate.Context, value: int | str) -> str:
    return await ctx.run_typed("ask", ask, prompt=f"value {value}")


@kinds.handler()
async def many(ctx: restate.Context, plans: dict[str, list[Trip]]) -> str:
    return await ctx.run_typed("ask", ask, prompt=f"{plans}")


@kinds.handler()
async def nothing(ctx: restate.Context) -> None:
    await ctx.run_typed("ask", ask, prompt="anything new?")


@kinds.handler()
async def blank(ctx: restate.Context, text: str) -> str:
    await ctx.run_typed("ask", ask, prompt=text)
    return ""


@kinds.handler(
    accept="application/octet-stream",
    content_type="application/octet-stream",
    input_serde=BytesSerde(),
    output_serde=BytesSerde(),
)
async def raw(ctx: restate.Context, data: bytes) -> bytes:
    return (await ctx.run_typed("ask", ask, prompt=data.decode(errors="replace"))).encode()


@kinds.handler()
async def greet(ctx: restate.Context, customer: Customer) -> str:
    return await ctx.run_typed("ask", ask, prompt=f"greet {customer.name}")


planner = restate.Workflow("Planner")


@planner.main()
async def run(ctx: restate.WorkflowContext, trip: Trip) -> str:
    return await ctx.run_typed("ask", ask, prompt=f"plan {trip}")


chat = restate.VirtualObject("Chat")


@chat.handler()
async def message(ctx: restate.ObjectContext, text: str) -> str:
    answer = await ctx.run_typed("ask", ask, prompt=text)
    ctx.set("history", [*(await ctx.get("history", type_hint=list[str]) or []), answer])
    return answer


@chat.handler(kind="shared")
async def history(ctx: restate.ObjectSharedContext) -> list[str]:
    return await ctx.get("history", type_hint=list[str]) or []


app = restate.app([kinds, planner, chat])
