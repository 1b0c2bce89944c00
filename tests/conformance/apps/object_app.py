"""The conformance corpus: a Virtual Object with every constructor and handler option of restate-sdk 1.3.0
(state preloaded, lazy on a handler and on another object, a shared handler), its state read, listed,
written and cleared, and calls and delayed sends to Virtual Objects. For tests/conformance."""

from __future__ import annotations

from datetime import timedelta

import restate
from model import ask, retries, traced

notebook = restate.VirtualObject(
    "Notebook",
    description="Notes kept per key, each answered by the model.",
    metadata={"team": "conformance"},
    inactivity_timeout=timedelta(seconds=45),
    abort_timeout=timedelta(seconds=20),
    journal_retention=timedelta(hours=6),
    idempotency_retention=timedelta(hours=2),
    state_preload=True,
    ingress_private=False,
    invocation_retry_policy=retries(40),
    invocation_context_managers=[traced],
)
# A second object for the option the first cannot take with state_preload.
tray = restate.VirtualObject("Tray", enable_lazy_state=True)


@notebook.handler(
    name="write",
    kind="exclusive",
    accept="application/json",
    content_type="application/json",
    input_serde=restate.serde.JsonSerde[str](),
    output_serde=restate.serde.JsonSerde[str](),
    metadata={"kind": "agent"},
    inactivity_timeout=timedelta(seconds=30),
    abort_timeout=timedelta(seconds=15),
    journal_retention=timedelta(hours=1),
    idempotency_retention=timedelta(hours=1),
    state_preload=False,
    ingress_private=False,
    invocation_retry_policy=retries(30),
    invocation_context_managers=[traced],
)
async def write(ctx: restate.ObjectContext, text: str) -> str:
    notes: list[str] = await ctx.get("notes", type_hint=list) or []
    keys = await ctx.state_keys()
    reply = await ctx.run_typed("ask", ask, prompt=text)
    ctx.set("notes", [*notes, reply])
    ctx.clear("draft")
    counted = await ctx.object_call(count, key=ctx.key(), arg="notes")
    ctx.object_send(reset, key=ctx.key(), arg="all", send_delay=timedelta(milliseconds=10))
    return f"{reply} ({len(keys)} keys, {counted} notes)"


@notebook.handler(kind="shared", enable_lazy_state=False)
async def count(ctx: restate.ObjectSharedContext, name: str) -> int:
    notes: list[str] = await ctx.get(name, type_hint=list) or []
    return len(notes) + len(await ctx.state_keys())


@tray.handler()
async def reset(ctx: restate.ObjectContext, what: str) -> None:
    ctx.clear_all()


app = restate.app([notebook, tray])
