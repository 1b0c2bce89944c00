"""A helper doing several kinds of thing: each code is reported at every handler line that calls it."""

import os
import time
import uuid

import restate
from restate import Context

gateway = restate.Service("Gateway")


def request_headers() -> dict[str, str]:
    return {
        "X-Request-Id": str(uuid.uuid4()),
        "X-Sent-At": str(time.time()),
        "Authorization": f"Bearer {os.environ['GATEWAY_TOKEN']}",
    }


def fixed_headers() -> dict[str, str]:
    return {"Accept": "application/json"}


@gateway.handler()
async def forward(ctx: Context, payload: dict) -> dict:
    headers = request_headers() | fixed_headers()  # expect: PT002, PT003, PT004
    return {"headers": headers, "payload": payload}


@gateway.handler()
async def preview(ctx: Context) -> dict:
    return request_headers()  # expect: PT002, PT003, PT004
