"""An agent on litellm, which paidtwice's frameworks extra does not install."""

from __future__ import annotations

import litellm  # noqa: F401 - the import is what is checked
import restate

agent = restate.Service("LitellmAgent")


@agent.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    return question


app = restate.app([agent])
