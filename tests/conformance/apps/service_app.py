"""The conformance corpus: a Service with every constructor and handler option of restate-sdk 1.3.0, and the
Context's journaled operations a plain service uses (steps, sleeps, calls and sends typed and generic, the
deterministic uuid, random and time, the request). For tests/conformance."""

from __future__ import annotations

import json
from datetime import timedelta

import restate
from model import ask, retries, traced

desk = restate.Service(
    "Desk",
    description="Answers a question and files it.",
    metadata={"team": "conformance"},
    inactivity_timeout=timedelta(seconds=45),
    abort_timeout=timedelta(seconds=20),
    journal_retention=timedelta(hours=6),
    idempotency_retention=timedelta(hours=2),
    ingress_private=False,
    invocation_retry_policy=retries(40),
    invocation_context_managers=[traced],
)
archive = restate.Service("Archive", ingress_private=True)


@archive.handler()
async def file(ctx: restate.Context, line: str) -> str:
    return await ctx.run_typed("write", lambda: f"filed {len(line)}")


@desk.handler(
    name="answer",
    accept="application/json",
    content_type="application/json",
    input_serde=restate.serde.JsonSerde[str](),
    output_serde=restate.serde.JsonSerde[str](),
    metadata={"kind": "agent"},
    inactivity_timeout=timedelta(seconds=30),
    abort_timeout=timedelta(seconds=15),
    journal_retention=timedelta(hours=1),
    idempotency_retention=timedelta(hours=1),
    ingress_private=False,
    invocation_retry_policy=retries(30),
    invocation_context_managers=[traced],
)
async def answer(ctx: restate.Context, question: str) -> str:
    asked_as = ctx.request().id
    reply = await ctx.run_typed(
        "ask",
        ask,
        restate.RunOptions(
            serde=restate.serde.JsonSerde[str](),
            type_hint=str,
            max_attempts=5,
            max_duration=timedelta(seconds=30),
            initial_retry_interval=timedelta(milliseconds=50),
            max_retry_interval=timedelta(seconds=1),
            retry_interval_factor=2.0,
            max_retry_duration=timedelta(seconds=30),
        ),
        prompt=question,
    )
    ticket = str(ctx.uuid())
    draw = ctx.random().randint(1, 6)
    stamp = await ctx.run("stamp", lambda: f"{ticket}:{draw}", max_attempts=3, type_hint=str)
    now = await ctx.time()
    # Long enough for the lab to kill inside the pause on a loaded machine.
    await ctx.sleep(timedelta(seconds=2), name="settle")
    filed = await ctx.service_call(file, arg=reply, idempotency_key=ticket)
    ctx.service_send(file, arg=stamp, send_delay=timedelta(milliseconds=10))
    raw = await ctx.generic_call("Archive", "file", arg=json.dumps(asked_as).encode())
    ctx.generic_send("Archive", "file", arg=json.dumps(str(now)).encode())
    return f"{reply} ({filed}, {raw.decode()})"


app = restate.app([desk, archive])
