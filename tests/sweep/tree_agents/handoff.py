"""A multi-agent handoff, journaled: a triage agent (a Restate service) asks the model which specialist
should answer, and hands the question to that specialist's service, which asks the model for the answer.
Every model call is a `ctx.run_typed` step, in the caller and in the callee."""

from __future__ import annotations

import json

import restate
from tree_models import reply, route

triage = restate.Service("Triage")
billing = restate.Service("BillingAgent")
support = restate.Service("SupportAgent")


@billing.handler()
async def answer_billing(ctx: restate.Context, question: str) -> str:
    return await ctx.run_typed("answer", reply, system="You are the billing specialist.", question=question)


@support.handler()
async def answer_support(ctx: restate.Context, question: str) -> str:
    return await ctx.run_typed("answer", reply, system="You are the support specialist.", question=question)


@triage.handler()
async def run(ctx: restate.Context, question: str) -> str:
    agent = await ctx.run_typed("route", route, question=question)
    # The handoff, by the name the model chose (a multi-agent framework's way of calling an agent).
    service, handler = f"{agent.capitalize()}Agent", f"answer_{agent}"
    answer = await ctx.generic_call(service, handler, json.dumps(question).encode())
    return str(json.loads(answer))
