"""The deck's agent, a weather agent: ask the model, call the weather tool, pause for a rate limit, ask again.

One handler holds the whole loop, so every replay runs it again from the first line. The tool call and the
pause go through the context and are journaled. The model call is journaled only in journaled mode
(PAIDTWICE_AGENT_MODE=journaled): the two modes differ in the one line marked below, so every difference in
the counts comes from that line.

Environment, read once at start-up:
    OPENAI_BASE_URL        the model's OpenAI-compatible base URL (the lab's stub hands over a lane)
    PAIDTWICE_TOOLS_URL    base URL of the tool endpoints
    PAIDTWICE_AGENT_MODE   "naive" (default) or "journaled"
    PAIDTWICE_PAUSE_S      length of the durable rate-limit pause, in seconds (default 2)
    PAIDTWICE_SERVICE      the service's name (default "Agent"; the lab gives each experiment its own)
    PAIDTWICE_EXPLICIT_RECOVERY  "1": the service runs under restate-sdk's preview `explicit_recovery` (a
                           retry runs the handler from the start and executes every `ctx.run` again)
    PAIDTWICE_RETRY_POLICY JSON of a retry policy replacing the deck's, or "server" for none (see
                           `retry_policy`)
"""

from __future__ import annotations

import asyncio
import json
import os
from datetime import timedelta
from typing import Any

import httpx2
import restate
from restate._preview import explicit_recovery

from paidtwice.agent._deck import DECK_RETRY

MODEL_URL = os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
TOOLS_URL = os.environ.get("PAIDTWICE_TOOLS_URL", "http://127.0.0.1:8000/tools")
JOURNALED = os.environ.get("PAIDTWICE_AGENT_MODE", "naive") == "journaled"
RATE_LIMIT_PAUSE = timedelta(seconds=float(os.environ.get("PAIDTWICE_PAUSE_S", "2")))

SERVICE = os.environ.get("PAIDTWICE_SERVICE", "Agent")


def _policy(given: dict[str, Any]) -> restate.InvocationRetryPolicy:
    """A retry policy from its PAIDTWICE_RETRY_POLICY form (`DECK_RETRY`)."""
    return restate.InvocationRetryPolicy(
        initial_interval=timedelta(seconds=float(given["initial_interval_s"])),
        exponentiation_factor=float(given["exponentiation_factor"]),
        max_interval=timedelta(seconds=float(given["max_interval_s"])),
        max_attempts=int(given["max_attempts"]),
        on_max_attempts=given["on_max_attempts"],
    )


DECK_RETRY_POLICY = _policy(DECK_RETRY)
"""The deck's policy (`DECK_RETRY`)."""


def retry_policy(spec: str) -> restate.InvocationRetryPolicy | None:
    """The deck's policy, or the one a row sets (PAIDTWICE_RETRY_POLICY, JSON): `max_attempts`,
    `on_max_attempts`, `initial_interval_s`, `max_interval_s`, `exponentiation_factor`; "server": none, so
    the server's default applies."""
    if not spec:
        return DECK_RETRY_POLICY
    if spec == "server":
        return None
    return _policy(json.loads(spec))


RETRY_POLICY = retry_policy(os.environ.get("PAIDTWICE_RETRY_POLICY", ""))
"""The policy this process's service runs under."""
EXPLICIT = os.environ.get("PAIDTWICE_EXPLICIT_RECOVERY", "") == "1"

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]

agent = restate.Service(SERVICE, invocation_retry_policy=RETRY_POLICY)
if EXPLICIT:
    explicit_recovery(agent)

# One client for the process's life, as a long-running agent keeps one: a client made per call loads the CA
# bundle every time (about 30 ms of CPU), which a replay of twenty attempts would pay twenty times over.
# httpx2, the maintained fork the `openai` client itself sends with: httpx's pool rescans every connection for
# every queued request, and with a thousand invocations in flight that scan took 90% of this process's CPU.
http = httpx2.AsyncClient(timeout=60.0)

# Requests in flight to the model and the tools at most: as many as the client's pool has connections
# (httpx2's default), as an agent stays under a provider's concurrency limit. The rest wait here, where a
# waiter costs nothing; queued in the pool, each one made every request slower (the pool rescans its queue
# on every change), and with 4,000 invocations at once that took a third of this process's CPU.
IN_FLIGHT = asyncio.Semaphore(100)


async def chat(messages: list[dict[str, Any]], invocation: str) -> dict[str, Any]:
    """One chat-completions request; returns the assistant message."""
    async with IN_FLIGHT:
        response = await http.post(
            f"{MODEL_URL}/chat/completions",
            json={"model": "gpt-4o-mini", "messages": messages, "tools": TOOLS},
            headers={"x-paidtwice-invocation": invocation},
        )
    response.raise_for_status()
    message: dict[str, Any] = response.json()["choices"][0]["message"]
    return message


async def get_weather(city: str, invocation: str) -> dict[str, Any]:
    """The weather tool, an HTTP endpoint of its own."""
    async with IN_FLIGHT:
        response = await http.get(
            f"{TOOLS_URL}/weather",
            params={"city": city},
            headers={"x-paidtwice-invocation": invocation},
        )
    response.raise_for_status()
    result: dict[str, Any] = response.json()
    return result


@agent.handler()
async def run(ctx: restate.Context, question: str) -> str:
    invocation = ctx.request().id
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    while True:
        if JOURNALED:
            reply = await ctx.run_typed("model", chat, messages=messages, invocation=invocation)
        else:
            reply = await chat(messages, invocation)  # lint: naive-model-call
        calls = reply.get("tool_calls") or []
        if not calls:
            return str(reply.get("content") or "")
        messages.append(reply)
        for call in calls:
            city = json.loads(call["function"]["arguments"])["city"]
            weather = await ctx.run_typed("weather", get_weather, city=city, invocation=invocation)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": json.dumps(weather)})
        await ctx.sleep(RATE_LIMIT_PAUSE)


app = restate.app([agent])
