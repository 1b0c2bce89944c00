"""The conformance corpus: state preloaded by name (`state_preload=[...]`), which restate-sdk 1.3.0 describes
only in discovery manifest v5; restate-server 1.7.12 asks for v1 to v4, so it refuses the app, and so does
paidtwice, in one line. For tests/conformance."""

from __future__ import annotations

import restate
from model import ask

shelf = restate.VirtualObject("Shelf", state_preload=["notes"])


@shelf.handler(state_preload=["notes"])
async def keep(ctx: restate.ObjectContext, text: str) -> str:
    reply = await ctx.run_typed("ask", ask, prompt=text)
    ctx.set("notes", [reply])
    return reply


app = restate.app([shelf])
