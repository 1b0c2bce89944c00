"""An agent with a step that must not happen twice: it books, through the stub's booking endpoint.

The booking is a journaled step (`ctx.run_typed`), so a replay after the step completed gets the recorded
booking. But a kill while the booking request is in flight leaves no result in the journal, and the replay
sends the request again: the booking is made twice unless the endpoint can tell it is the same request. An
Idempotency-Key header, as payment APIs take one, does that, if the key is the same on every attempt:

    none         no key: every attempt books again
    request-id   ctx.request().id and the step's name: the same on every attempt of the invocation
    uuid         ctx.uuid(), drawn outside the action: seeded per invocation, so the same on every replay

Environment, read once at start-up:
    PAIDTWICE_TOOLS_URL    base URL of the tool endpoints (the stub's lane)
    PAIDTWICE_BOOKING_KEY  none (default), request-id or uuid
    PAIDTWICE_SERVICE      the service's name (default "Booking")
    PAIDTWICE_BOOKING_PAUSE_S  seconds of a durable pause after the booking (default 0: none), a moment to
                           kill the agent once the booking is journaled
    PAIDTWICE_EXPLICIT_RECOVERY  "1": the service runs under restate-sdk's preview `explicit_recovery`, so a
                           retry executes the journaled booking again
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import restate
from restate._preview import explicit_recovery

from paidtwice.agent.weather import EXPLICIT, RETRY_POLICY, http

TOOLS_URL = os.environ.get("PAIDTWICE_TOOLS_URL", "http://127.0.0.1:8000/tools")
KEY = os.environ.get("PAIDTWICE_BOOKING_KEY", "none")
SERVICE = os.environ.get("PAIDTWICE_SERVICE", "Booking")
PAUSE = timedelta(seconds=float(os.environ.get("PAIDTWICE_BOOKING_PAUSE_S", "0")))

booking = restate.Service(SERVICE, invocation_retry_policy=RETRY_POLICY)
if EXPLICIT:
    explicit_recovery(booking)


async def book(key: str | None, invocation: str) -> dict[str, Any]:
    """POST one booking; with `key`, as its Idempotency-Key."""
    headers = {"x-paidtwice-invocation": invocation}
    if key is not None:
        headers["Idempotency-Key"] = key
    response = await http.post(f"{TOOLS_URL}/book", json={"what": "table for two"}, headers=headers)
    response.raise_for_status()
    result: dict[str, Any] = response.json()
    return result


@booking.handler()
async def run(ctx: restate.Context, question: str) -> str:
    invocation = ctx.request().id
    key: str | None = None
    if KEY == "request-id":
        key = f"{invocation}:book"
    elif KEY == "uuid":
        key = str(ctx.uuid())
    result = await ctx.run_typed("book", book, key=key, invocation=invocation)
    if PAUSE:
        await ctx.sleep(PAUSE)
    return str(result["booking_id"])


app = restate.app([booking])
