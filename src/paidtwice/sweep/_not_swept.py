"""Why a handler's clean run cannot be swept: it ended before its first model call (its input refused, a
crash on the way, a model client that does not reach the stub) or waits on nothing. In a sweep of several
handlers that handler is listed with the reason and the others are swept."""

from __future__ import annotations

import json
from typing import Any

from paidtwice._exceptions import UsageError
from paidtwice.engine import FailureEvent, InvocationRow
from paidtwice.sweep._callees import failure_of

__all__ = ["NO_MODEL_CALL", "NotSwept", "WaitsOnNothing", "before_first_call"]

NO_MODEL_CALL = "no model call reached the stub: does the app read OPENAI_BASE_URL or ANTHROPIC_BASE_URL?"


class NotSwept(UsageError):
    """A clean run no point can be compared with. Its message names the handler and why."""


class WaitsOnNothing(NotSwept):
    """A clean run that sits on an awakeable or a promise nothing resolves: it cannot complete, so no
    point of its handler can be swept. Its message names the wait and why nothing resolves it."""


def before_first_call(
    name: str, input: Any, row: InvocationRow | None, failures: list[FailureEvent]
) -> NotSwept | None:
    """Why the clean run of `name` (SERVICE/HANDLER), which made no model call, cannot be swept: it did not
    complete, or completed with a failure (the SDK refused its input); None when it completed (a handler
    that calls no model is swept for its steps, state and journal). `failures` are the ones the server
    kept: the row's own is cleared while the next attempt runs."""
    status = row.status if row is not None else "unknown"
    given = json.dumps(input)
    if status != "completed":
        kept = failures[-1].message.splitlines()[0][:300] if failures else ""
        failed = failure_of(row) or (f", the last attempt failed: {kept}" if kept else "")
        return NotSwept(
            f"the clean run of {name} ended before its first model call: it is {status}{failed} "
            f"(input {given}); {NO_MODEL_CALL}"
        )
    if row is not None and row.completion_failure:
        said = " ".join(row.completion_failure.split())[:300]
        return NotSwept(f"the clean run of {name} failed before its first model call (input {given}): {said}")
    return None
