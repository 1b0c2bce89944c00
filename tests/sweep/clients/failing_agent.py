"""An agent that asks the model, then fails on every attempt reading its answer: a clean run never ends."""

from __future__ import annotations

import os

import requests
import restate

agent = restate.Service("FailingAgent")


@agent.handler()
async def quote(ctx: restate.Context, question: str) -> str:
    response = requests.post(
        f"{os.environ['OPENAI_BASE_URL']}/chat/completions",
        json={"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]},
        timeout=120,
    )
    reply = response.json()["choices"][0]["message"]
    return str(reply["verdict"])  # the answer has no verdict: KeyError, attempt after attempt


app = restate.app([agent])
