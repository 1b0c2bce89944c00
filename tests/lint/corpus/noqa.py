"""`# noqa` suppression: by code, by several codes, bare, and a code that does not match the finding."""

import os
import time
import uuid

import restate
from restate import Context

audit = restate.Service("Audit")


def audit_headers() -> dict[str, str]:
    return {"X-Audit-Id": str(uuid.uuid4()), "X-Audit-At": str(time.time())}


@audit.handler()
async def record(ctx: Context, action: str) -> dict:
    at = time.time()  # noqa: PT002
    both = f"{uuid.uuid4()}@{time.monotonic()}"  # noqa: PT002, PT003
    anything = (os.getenv("AUDIT_SINK"), uuid.uuid1())  # noqa
    headers = audit_headers()  # noqa: PT002, PT003
    partly = audit_headers()  # noqa: PT003  # expect: PT002
    wrong = time.perf_counter()  # noqa: PT001  # expect: PT002
    return {"action": action, "at": at, "both": both, "any": anything, "h": headers, "p": partly, "w": wrong}
