"""Why a handler's clean run cannot be swept: it ended before its first model call (its input refused, a
crash on the way, a model client that does not reach the stub) or waits on nothing. In a sweep of several
handlers that handler is listed with the reason and the others are swept. A clean run that fails after its
first model call (`CleanRunFails`) is listed so too when it ran on an input paidtwice made up for a handler
the user did not name (`made_up_input`); otherwise it stops the sweep, as the user's own input is expected
to work."""

from __future__ import annotations

import json
import re
from typing import Any

from paidtwice._exceptions import UsageError
from paidtwice.engine import FailureEvent, InvocationRow
from paidtwice.sweep._callees import failure_of

__all__ = [
    "NO_MODEL_CALL",
    "CleanRunFails",
    "NotSwept",
    "WaitsOnNothing",
    "before_first_call",
    "first_line",
    "made_up_input",
]

_UNREACHED = re.compile(
    r"connect|connection|getaddrinfo|name resolution|not known|unreachable|timed? ?out", re.IGNORECASE
)
"""A failure that reads as a model client which could not reach its endpoint."""

NO_MODEL_CALL = "no model call reached the stub: does the app read OPENAI_BASE_URL or ANTHROPIC_BASE_URL?"


class NotSwept(UsageError):
    """A clean run no point can be compared with. Its message names the handler and why."""


class WaitsOnNothing(NotSwept):
    """A clean run that sits on an awakeable or a promise nothing resolves: it cannot complete, so no
    point of its handler can be swept. Its message names the wait and why nothing resolves it."""


class CleanRunFails(UsageError):
    """A clean run that failed attempt after attempt, or paused on its failures, after its first model call.
    Its message says so as a sweep of that handler alone says it."""

    def __init__(self, message: str, *, name: str, error: str) -> None:
        super().__init__(message)
        self.name = name
        """The handler, SERVICE/HANDLER as the user's code names it."""
        self.error = error
        """The first line of its last failure ("" when the server kept none)."""


def made_up_input(err: CleanRunFails, input: Any) -> str:
    """Why the handler of `err`, run on `input` (which paidtwice made from its schema), is not swept, and how
    to sweep it: the reason listed beside the handlers that were swept."""
    given = _cut(json.dumps(input), 200)
    failed = f": {err.error}" if err.error else ""
    return (
        f"the clean run of {err.name} fails on the input paidtwice made from its schema ({given}){failed}; "
        f"{_how_to_sweep(err.name)}"
    )


def _how_to_sweep(name: str) -> str:
    return f"sweep it with an input it takes: --handler {name} --input JSON"


def first_line(row: InvocationRow | None, failures: list[FailureEvent]) -> str:
    """The first line of the invocation's last failure, cut short: the row's, else the last the server kept
    in its journal events (the row's own is cleared while the next attempt runs); "" when there is none.
    The SDK gives a step's exception as its repr, `ValueError("...\\n...")`: an escaped line break ends the
    line too."""
    message = (row.last_failure or "").strip() if row is not None else ""
    if not message and failures:
        message = failures[-1].message.strip()
    if not message:
        return ""
    line = message.splitlines()[0]
    first = line.split("\\n")[0]
    return _cut(first, 300) + (" ..." if first != line else "")


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."


def before_first_call(
    name: str, input: Any, row: InvocationRow | None, failures: list[FailureEvent], *, made: bool = False
) -> NotSwept | None:
    """Why the clean run of `name` (SERVICE/HANDLER), which made no model call, cannot be swept: it did not
    complete, or completed with a failure (the SDK refused its input; `made`: an input paidtwice made, so
    the reason says how to give one); None when it completed (a handler that calls no model is swept for
    its steps, state and journal). `failures` are the ones the server kept: the row's own is cleared while
    the next attempt runs."""
    status = row.status if row is not None else "unknown"
    given = json.dumps(input)
    if status != "completed":
        kept = first_line(None, failures)
        failed = failure_of(row) or (f", the last attempt failed: {kept}" if kept else "")
        # A model client that does not reach the stub fails to connect, or hangs: a failure of another kind
        # (an input refused, a crash on the way) is the cause itself, and the hint would mislead.
        hint = f"; {NO_MODEL_CALL}" if not failed or _UNREACHED.search(failed) else ""
        return NotSwept(
            f"the clean run of {name} ended before its first model call: it is {status}{failed} "
            f"(input {given}){hint}"
        )
    if row is not None and row.completion_failure:
        said = " ".join(row.completion_failure.split())[:300]
        how = f"; {_how_to_sweep(name)}" if made else ""
        return NotSwept(
            f"the clean run of {name} failed before its first model call (input {given}): {said}{how}"
        )
    return None
