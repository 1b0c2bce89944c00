"""The conformance corpus: restate-sdk 1.3.0's Context operations between invocations: awakeables and
signals resolved and rejected, an invocation cancelled and one attached to, and a scope taken (calls made
through a scope need the server's experimental flow control, which the lab's server does not turn on, so
the corpus only takes it). For tests/conformance."""

from __future__ import annotations

from datetime import timedelta

import restate
from model import ask

relay = restate.Service("Relay")
# Its handlers take an invocation id or run only inside the relay's tree, never called from outside.
inner = restate.Service("RelayInner", ingress_private=True)


@inner.handler()
async def ping(ctx: restate.Context, caller: str) -> None:
    ctx.resolve_signal(caller, "ready", "go")
    ctx.reject_signal(caller, "refused", "not this one")


@inner.handler()
async def echo(ctx: restate.Context, text: str) -> str:
    return await ctx.run_typed("echo", lambda: text.upper())


@relay.handler()
async def relay_question(ctx: restate.Context, question: str) -> str:
    reply = await ctx.run_typed("ask", ask, prompt=question)
    ctx.scope("conformance")

    yes_id, yes = ctx.awakeable(type_hint=str)
    ctx.resolve_awakeable(yes_id, "yes")
    no_id, no = ctx.awakeable(type_hint=str)
    ctx.reject_awakeable(no_id, "no")
    answers = [await yes]
    try:
        await no
    except restate.TerminalError as refused:
        answers.append(refused.message)

    await ctx.service_call(ping, arg=ctx.request().id)
    answers.append(await ctx.signal("ready", type_hint=str))
    try:
        await ctx.signal("refused", type_hint=str)
    except restate.TerminalError as refused:
        answers.append(refused.message)

    later = ctx.service_send(echo, arg="later", send_delay=timedelta(hours=1))
    ctx.cancel_invocation(await later.invocation_id())
    now = ctx.service_send(echo, arg=reply)
    answers.append(await ctx.attach_invocation(await now.invocation_id(), type_hint=str))
    return " / ".join(answers)


app = restate.app([relay, inner])
