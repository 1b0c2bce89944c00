"""An agent on Google ADK through Restate's integration; paidtwice's frameworks extra does not install ADK."""

from __future__ import annotations

import restate
from restate.ext.adk import RestatePlugin  # noqa: F401 - the import is what is checked

agent = restate.Service("AdkAgent")


@agent.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    return question


app = restate.app([agent])
