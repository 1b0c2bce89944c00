"""Read Restate's introspection tables (`POST /query`) into typed rows.

The admin API answers JSON only for `Accept: application/json` exactly, and drops null columns from a row, so
every optional column is read with `.get()`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

import httpx

from paidtwice._exceptions import NotFound, PaidtwiceError, ServerUnreachable
from paidtwice.engine._http import http

__all__ = [
    "FailureEvent",
    "InvocationRow",
    "InvocationStatus",
    "JournalEntry",
    "QueryFailed",
    "SqlClient",
    "epoch",
    "invocation_status",
    "journal_from_rows",
]

InvocationStatus = Literal[
    "pending", "scheduled", "ready", "running", "backing-off", "suspended", "paused", "completed"
]
"""An invocation's status in sys_invocation."""

_INVOCATION_COLUMNS = (
    "id, target, status, pinned_deployment_id, retry_count, last_start_at, next_retry_at, "
    "last_failure, last_failure_error_code, last_failure_related_command_index, journal_size, "
    "completion_result, completion_failure"
)
_ID = re.compile(r"^inv_[0-9A-Za-z]+$")


@dataclass(frozen=True)
class JournalEntry:
    """One row of `sys_journal`."""

    index: int
    """Position in the journal; 0 is the input."""
    type: str
    """Entry type as sys_journal writes it, e.g. "Command: Run", "Notification: Sleep"."""
    name: str
    """The step's name ("weather", "model"), "" where the entry has none."""
    appended_at: str
    """When the server appended it (RFC 3339)."""

    @property
    def is_command(self) -> bool:
        return self.type.startswith("Command:")

    def label(self) -> str:
        return f"{self.type} {self.name}".rstrip()


@dataclass(frozen=True)
class InvocationRow:
    """The columns of one `sys_invocation` row that paidtwice reads."""

    id: str
    """Invocation id."""
    target: str
    """Service/handler, e.g. "Agent/run"."""
    status: str
    """pending, scheduled, running, backing-off, suspended, paused or completed (see `invocation_status`)."""
    pinned_deployment_id: str | None
    """Deployment the invocation is pinned to, once it has started."""
    retry_count: int | None
    """Attempts so far, while running or backing off (NULL once paused)."""
    last_start_at: str | None
    """When the latest attempt started."""
    next_retry_at: str | None
    """When the next attempt is due, while backing off."""
    last_failure: str | None
    """The latest attempt's failure message, while backing off."""
    last_failure_error_code: str | None
    """Its Restate code, e.g. "RT0016"."""
    last_failure_command_index: int | None
    """Journal command index the failure relates to."""
    journal_size: int
    """Entries in the journal."""
    completion_result: str | None
    """"success" or "failure" once completed."""
    completion_failure: str | None
    """Failure message of a completed invocation that failed."""


@dataclass(frozen=True)
class FailureEvent:
    """A failure kept in `sys_journal_events` (TransientError, or the one in a Paused event)."""

    event_type: str
    """"TransientError" or "Paused"."""
    after_index: int
    """Journal entry after which it happened."""
    appended_at: str
    """When it was recorded."""
    error_code: int | None
    """Numeric code (570 is a journal mismatch)."""
    doc_code: str | None
    """Restate's documentation code, e.g. "RT0016"."""
    message: str
    """The full error message."""
    related_command_index: int | None
    """Command index the error names, when it names one."""
    related_command_type: str | None
    """Command type the error names."""
    related_command_name: str | None
    """Command name the error names."""


class QueryFailed(PaidtwiceError):
    """The server answered a query with an error; `status` is its HTTP status (5xx: the server's trouble,
    which a cluster in the middle of a failover has for a while)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class SqlClient:
    """Runs SQL against the admin API at `url`."""

    url: str
    timeout: float = 15.0
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """Extra request headers (a secured admin API's `Authorization`): sent, never shown (`repr` leaves them
    out, and no message quotes them)."""

    def query(self, sql: str) -> list[dict[str, Any]]:
        try:
            response = http().post(
                f"{self.url}/query",
                json={"query": sql},
                headers={**dict(self.headers), "Accept": "application/json"},
                timeout=self.timeout,
            )
        except httpx.HTTPError as err:
            raise ServerUnreachable(
                f"no Restate admin API answers at {self.url} ({err}); is the server running?"
            ) from err
        if response.status_code in (401, 403):
            raise QueryFailed(
                f"the admin API at {self.url} refused the query ({response.status_code}): check the "
                "credentials passed with --header",
                status=response.status_code,
            )
        if response.status_code != 200 and "non valid invocation id" in response.text:
            raise NotFound("that is not a valid Restate invocation id (they look like inv_1a2b...)")
        if response.status_code != 200:
            raise QueryFailed(
                f"query failed ({response.status_code}): {response.text[:300]}", status=response.status_code
            )
        rows: list[dict[str, Any]] = response.json().get("rows", [])
        return rows

    def state(self, service: str, key: str) -> dict[str, str]:
        """A Virtual Object's (or a Workflow's) state under `key`: each entry's value as UTF-8 text."""
        rows = self.query(
            "SELECT key, value_utf8 FROM state "
            f"WHERE service_name = '{_quoted(service)}' AND service_key = '{_quoted(key)}'"
        )
        return {str(row["key"]): str(row.get("value_utf8") or "") for row in rows}

    def journal(self, invocation_id: str) -> list[JournalEntry]:
        rows = self.query(
            "SELECT index, entry_type, name, appended_at FROM sys_journal "
            f"WHERE id = '{_checked(invocation_id)}' ORDER BY index"
        )
        return journal_from_rows(rows)

    def invocation(self, invocation_id: str) -> InvocationRow | None:
        rows = self.query(
            f"SELECT {_INVOCATION_COLUMNS} FROM sys_invocation WHERE id = '{_checked(invocation_id)}'"
        )
        return _invocation(rows[0]) if rows else None

    def protocol_version(self, invocation_id: str) -> int | None:
        """The service protocol version the invocation runs on (`pinned_service_protocol_version`: 6 by
        default on 1.7, 7 with its experimental flag); None before it is pinned, or on a server without
        the column."""
        try:
            rows = self.query(
                "SELECT pinned_service_protocol_version FROM sys_invocation "
                f"WHERE id = '{_checked(invocation_id)}'"
            )
        except QueryFailed:
            return None
        value = rows[0].get("pinned_service_protocol_version") if rows else None
        return int(value) if value is not None else None

    def invocations(self, invocation_ids: Sequence[str]) -> dict[str, InvocationRow]:
        """Rows of several invocations in one query (ids not found are absent)."""
        if not invocation_ids:
            return {}
        ids = ", ".join(f"'{_checked(i)}'" for i in invocation_ids)
        rows = self.query(f"SELECT {_INVOCATION_COLUMNS} FROM sys_invocation WHERE id IN ({ids})")
        return {str(row["id"]): _invocation(row) for row in rows}

    def callees_open(self, invocation_id: str) -> list[str]:
        """The targets of the invocations below `invocation_id` (called or sent to by it, or by those,
        through `invoked_by_id`) that have not completed."""
        open_targets: list[str] = []
        parents = [invocation_id]
        while parents:
            ids = ", ".join(f"'{_checked(i)}'" for i in parents)
            rows = self.query(f"SELECT id, target, status FROM sys_invocation WHERE invoked_by_id IN ({ids})")
            open_targets += [str(r.get("target")) for r in rows if r.get("status") != "completed"]
            parents = [str(r["id"]) for r in rows]
        return open_targets

    def callees(self, invocation_id: str) -> list[InvocationRow]:
        """The invocations `invocation_id` called or sent (`invoked_by_id`), in no particular order."""
        by = _checked(invocation_id)
        rows = self.query(f"SELECT {_INVOCATION_COLUMNS} FROM sys_invocation WHERE invoked_by_id = '{by}'")
        return [_invocation(row) for row in rows]

    def failures(self, invocation_id: str) -> list[FailureEvent]:
        rows = self.query(
            "SELECT after_journal_entry_index, appended_at, event_type, event_json "
            f"FROM sys_journal_events WHERE id = '{_checked(invocation_id)}' "
            "ORDER BY appended_at"
        )
        events = []
        for row in rows:
            event = json.loads(row.get("event_json") or "{}")
            failure = event.get("last_failure", event) if row["event_type"] == "Paused" else event
            if "error_message" not in failure:
                continue
            events.append(
                FailureEvent(
                    event_type=str(row["event_type"]),
                    after_index=int(row.get("after_journal_entry_index") or 0),
                    appended_at=str(row.get("appended_at", "")),
                    error_code=failure.get("error_code"),
                    doc_code=failure.get("restate_doc_error_code"),
                    message=str(failure.get("error_message", "")),
                    related_command_index=failure.get("related_command_index"),
                    related_command_type=failure.get("related_command_type"),
                    related_command_name=failure.get("related_command_name"),
                )
            )
        return events


def epoch(stamp: str | None) -> float | None:
    """Seconds since the epoch of an ISO timestamp the server wrote (None for none)."""
    if not stamp:
        return None
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def journal_from_rows(rows: list[dict[str, Any]]) -> list[JournalEntry]:
    """Typed entries from `sys_journal` rows (as the admin API returns them, or as captured)."""
    entries = [
        JournalEntry(
            index=int(row["index"]),
            type=str(row["entry_type"]),
            name=str(row.get("name") or ""),
            appended_at=str(row.get("appended_at") or ""),
        )
        for row in rows
    ]
    return sorted(entries, key=lambda entry: entry.index)


_STATUSES: tuple[InvocationStatus, ...] = get_args(InvocationStatus)


def invocation_status(value: str) -> InvocationStatus:
    """A status read from sys_invocation, checked: one this code does not know would be misread wherever it
    is used."""
    for status in _STATUSES:
        if value == status:
            return status
    known = ", ".join(_STATUSES)
    raise PaidtwiceError(
        f"sys_invocation reports a status paidtwice does not know: {value!r} (known: {known})"
    )


def _invocation(row: dict[str, Any]) -> InvocationRow:
    def opt_int(key: str) -> int | None:
        value = row.get(key)
        return int(value) if value is not None else None

    return InvocationRow(
        id=str(row["id"]),
        target=str(row.get("target", "")),
        status=str(row.get("status", "")),
        pinned_deployment_id=row.get("pinned_deployment_id"),
        retry_count=opt_int("retry_count"),
        last_start_at=row.get("last_start_at"),
        next_retry_at=row.get("next_retry_at"),
        last_failure=row.get("last_failure"),
        last_failure_error_code=row.get("last_failure_error_code"),
        last_failure_command_index=opt_int("last_failure_related_command_index"),
        journal_size=int(row.get("journal_size") or 0),
        completion_result=row.get("completion_result"),
        completion_failure=row.get("completion_failure"),
    )


def _checked(invocation_id: str) -> str:
    if not _ID.match(invocation_id):
        raise PaidtwiceError(f"{invocation_id!r} is not an invocation id (they look like inv_1a2b...)")
    return invocation_id


def _quoted(text: str) -> str:
    """A string inside a SQL literal: its quotes doubled."""
    return text.replace("'", "''")
