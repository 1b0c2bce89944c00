"""Read a journal-mismatch message (RT0016) against the journal it is about.

The message names a command index (the SDK counts commands only) and the two operations that disagreed; the
reader gives the journal's entry index beside it. It does not trust the labels "recorded" and "attempts to
perform" (SDKs have printed them swapped): it says whether the journal's entry at that index agrees with them.

Two forms are read:

    - The previous execution ran and recorded the following: 'run' (index '1')
    - The current execution attempts to perform the following: 'handler return'

    - The mismatch happened while executing 'run' (index '1')
    - Difference:
       name: weather != model
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from paidtwice._exceptions import NotFound, UsageError
from paidtwice.engine import JournalEntry, SqlClient
from paidtwice.results import Mismatch

__all__ = ["MISMATCH_CODE", "Explanation", "explain", "operation_of", "read_mismatch"]

MISMATCH_CODE = "RT0016"
"""The error code Restate gives a journal mismatch."""

_RECORDED = re.compile(r"recorded the following:\s*'([^']+)'(?:\s*\(index '(\d+)'\))?")
_ATTEMPTED = re.compile(r"attempts to perform the following:\s*'([^']+)'(?:\s*\(index '(\d+)'\))?")
_EXECUTING = re.compile(r"while executing\s*'([^']+)'\s*\(index '(\d+)'\)")
_DIFFERENCE = re.compile(r"^\s*(\w+):\s*(.*?)\s*!=\s*(.*?)\s*$", re.MULTILINE)

# The SDK's words for each journal command type.
_OPERATIONS = {
    "input": "Input",
    "handler return": "Output",
    "output": "Output",
    "run": "Run",
    "sleep": "Sleep",
    "call": "Call",
    "one way call": "OneWayCall",
    "get state": "GetLazyState",
    "get lazy state": "GetLazyState",
    "get eager state": "GetEagerState",
    "set state": "SetState",
    "clear state": "ClearState",
    "clear all state": "ClearAllState",
    "get state keys": "GetLazyStateKeys",
    "awakeable": "Awakeable",
    "complete awakeable": "CompleteAwakeable",
    "get promise": "GetPromise",
    "peek promise": "PeekPromise",
    "complete promise": "CompletePromise",
}


def operation_of(label: str) -> str:
    """Journal command type for one of the SDK's operation words ("handler return" -> "Output")."""
    key = label.strip().lower().replace("_", " ")
    return _OPERATIONS.get(key, label.strip().title().replace(" ", ""))


def _command_at(journal: Sequence[JournalEntry], index: int) -> JournalEntry | None:
    # The message's index counts commands; notifications sit between them in sys_journal.
    commands = [entry for entry in journal if entry.is_command]
    if 0 <= index < len(commands):
        return commands[index]
    return None


def _describe(entry: JournalEntry) -> str:
    kind = entry.type.split(":", 1)[-1].strip().lower()
    return f"{kind} {entry.name}".strip()


def read_mismatch(message: str, journal: Sequence[JournalEntry]) -> Mismatch | None:
    """The mismatch in `message`, read against `journal`; None if the message is not a mismatch."""
    recorded = _RECORDED.search(message)
    attempted = _ATTEMPTED.search(message)
    if recorded and attempted:
        index_text = recorded.group(2) or attempted.group(2) or "0"
        index = int(index_text)
        entry = _command_at(journal, index)
        said_recorded, said_attempted = recorded.group(1), attempted.group(1)
        if entry is None:
            return Mismatch(None, f"(no command {index})", said_attempted, False, message, index)
        kind = entry.type.split(":", 1)[-1].strip()
        agree = operation_of(said_recorded) == kind
        swapped = not agree and operation_of(said_attempted) == kind
        other = said_recorded if swapped else said_attempted
        return Mismatch(entry.index, _describe(entry), other, agree, message, index)
    executing = _EXECUTING.search(message)
    if executing:
        index = int(executing.group(2))
        entry = _command_at(journal, index)
        diff = _DIFFERENCE.search(message[executing.end() :])
        op = executing.group(1)
        if entry is None:
            return Mismatch(None, f"(no command {index})", op, False, message, index)
        if diff is None:
            return Mismatch(entry.index, _describe(entry), op, True, message, index)
        field, left, right = diff.group(1), diff.group(2), diff.group(3)
        journal_value = entry.name if field == "name" else None
        if journal_value is None:
            # Only the name is in sys_journal's columns; other fields are taken as printed.
            return Mismatch(entry.index, _describe(entry), f"{op} with {field} {right}", True, message, index)
        agree = journal_value == left
        other = left if (not agree and journal_value == right) else right
        return Mismatch(entry.index, _describe(entry), f"{op} {other}", agree, message, index)
    return None


@dataclass(frozen=True)
class Explanation:
    """An invocation's latest failure, read from where its state keeps it."""

    invocation_id: str
    """The invocation."""
    status: str
    """Its status when read."""
    code: str | None
    """Restate's code for the failure ("RT0016" for a journal mismatch)."""
    message: str
    """The failure's message."""
    source: str
    """Where the failure was read from."""
    mismatch: Mismatch | None
    """The mismatch read against the journal, when the failure is one."""


def explain(sql: SqlClient, invocation_id: str) -> Explanation:
    """Read an invocation's failure: sys_invocation while it runs or backs off, the journal events once
    paused (sys_invocation clears last_failure then), and the journal to check the message against."""
    row = sql.invocation(invocation_id)
    if row is None:
        raise NotFound(f"no invocation {invocation_id} on this server")
    code: str | None = None
    message = ""
    source = ""
    if row.last_failure:
        code, message = row.last_failure_error_code, row.last_failure
        source = f"sys_invocation.last_failure (status {row.status})"
    else:
        events = sql.failures(invocation_id)
        if events:
            event = events[-1]
            code, message = event.doc_code, event.message
            source = f"sys_journal_events, {event.event_type} event at {event.appended_at}"
    if not message:
        raise UsageError(f"invocation {invocation_id} ({row.status}) has no recorded failure to explain")
    journal = sql.journal(invocation_id)
    return Explanation(invocation_id, row.status, code, message, source, read_mismatch(message, journal))
