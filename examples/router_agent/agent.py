"""A router, written with the official `openai` client: one call classifies a ticket, a second answers it as
the chosen team's specialist.

The two calls are different conversations (the specialist's has its team's system prompt), so its script file
matches the classification by its user message (`when`) and each specialist by its system prompt
(`when_system`). `run` journals both model calls (`ctx.run_typed`); `run_naive` makes them plainly: a replay
then classifies again and, if the model changes its mind, asks another team.

    paidtwice sweep --app agent:app --service Router --handler run_naive \\
        --input '"I was charged twice for my subscription this month."' \\
        --script examples/router_agent/script.toml --app-dir examples/router_agent
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import restate
from openai import AsyncOpenAI

client = AsyncOpenAI()

TEAMS = {
    "billing": "You are a billing support specialist. Explain charges and refunds plainly.",
    "technical": "You are a technical support specialist. Give numbered troubleshooting steps.",
    "account": "You are an account security specialist. Put the customer's account safety first.",
    "product": "You are a product specialist. Explain what the product can and cannot do.",
}

CLASSIFY = (
    "Select the most appropriate support team for the ticket below: {teams}. First explain your reasoning "
    "in <reasoning> tags, then give the team's name in <selection> tags.\n\nTicket: {ticket}"
)

router = restate.Service("Router")


async def ask(messages: list[Any]) -> str:
    """One chat-completions call; returns the answer's text."""
    response = await client.chat.completions.create(model="gpt-4o-mini", messages=messages)
    return response.choices[0].message.content or ""


def selected_team(decision: str) -> str:
    found = re.search(r"<selection>\s*(\w+)\s*</selection>", decision)
    team = found.group(1).lower() if found else ""
    if team not in TEAMS:
        raise restate.TerminalError(f"the router chose no known team: {decision!r}")
    return team


async def route(ticket: str, model: Callable[[str, list[Any]], Awaitable[str]]) -> str:
    """Classify the ticket, then ask the chosen team's specialist; `model(name, messages)` asks the model."""
    classify = [{"role": "user", "content": CLASSIFY.format(teams=", ".join(TEAMS), ticket=ticket)}]
    team = selected_team(await model("classify", classify))
    specialist = [{"role": "system", "content": TEAMS[team]}, {"role": "user", "content": ticket}]
    return f"[{team}] {await model(f'answer as {team}', specialist)}"


@router.handler()
async def run(ctx: restate.Context, ticket: str) -> str:
    """Classify and answer, both model calls journaled."""
    return await route(ticket, lambda name, messages: ctx.run_typed(name, ask, messages=messages))


@router.handler()
async def run_naive(ctx: restate.Context, ticket: str) -> str:
    """Classify and answer, both model calls outside the journal."""
    return await route(ticket, lambda name, messages: ask(messages))


app = restate.app([router])
