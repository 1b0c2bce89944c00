"""An app whose import takes seconds of CPU, as an app importing litellm does on a busy machine."""

from __future__ import annotations

import time

import restate

_until = time.process_time() + 3.0
while time.process_time() < _until:
    pass

slow = restate.Service("Slow")


@slow.handler()
async def run(ctx: restate.Context, text: str) -> str:
    return text


app = restate.app([slow])
