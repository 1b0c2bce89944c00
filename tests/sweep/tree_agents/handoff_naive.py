"""The multi-agent handoff of `handoff`, with specialists that call the model outside the journal (the triage
agent's call is journaled): a crash inside a specialist after its model answered pays that answer again."""

from __future__ import annotations

import json

import restate
from tree_models import reply, route

triage = restate.Service("Triage")
billing = restate.Service("BillingAgent")
support = restate.Service("SupportAgent")


@billing.handler()
async def answer_billing(ctx: restate.Context, question: str) -> str:
    return await reply(system="You are the billing specialist.", question=question)


@support.handler()
async def answer_support(ctx: restate.Context, question: str) -> str:
    return await reply(system="You are the support specialist.", question=question)


@triage.handler()
async def run(ctx: restate.Context, question: str) -> str:
    agent = await ctx.run_typed("route", route, question=question)
    # The handoff, by the name the model chose (a multi-agent framework's way of calling an agent).
    service, handler = f"{agent.capitalize()}Agent", f"answer_{agent}"
    answer = await ctx.generic_call(service, handler, json.dumps(question).encode())
    return str(json.loads(answer))
