"""A module holding two Restate apps: `replay-check --app two_apps` cannot tell which one is the new code."""

from __future__ import annotations

import restate

greeter = restate.Service("Greeter")


@greeter.handler()
async def greet(ctx: restate.Context, name: str) -> str:
    return f"Hello {name}"


app = restate.app([greeter])
admin_app = restate.app([greeter])
