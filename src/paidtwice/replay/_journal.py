"""Journal files: one invocation's journal, self-contained, read without a server.

A journal file is JSON, format "paidtwice-journal" version 1: the invocation (id, service, handler, key,
status, deployment, pinned protocol version), its random seed and where that came from, where and when it
was captured, and its entries, each with `raw`: `sys_journal.raw` in base64, the protobuf body of the entry's
protocol message without the frame header. The seed is a decimal string: a 64-bit integer that JSON readers
in other languages would round. The fields: docs/reference/records.md ("Journal files") and
docs/reference/schemas/journal.schema.json.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paidtwice._exceptions import NotFound, UsageError
from paidtwice.engine import JournalEntry, SqlClient
from paidtwice.replay._seed import random_seed
from paidtwice.replay._untree import as_code_names

__all__ = [
    "FORMAT",
    "VERSION",
    "JournalFile",
    "JournalFileError",
    "RecordedEntry",
    "capture",
    "capture_journal",
    "journal_paths",
    "load_journal",
    "save_all",
    "save_invocation",
    "save_journal",
    "save_with_prefix",
    "to_json",
]

FORMAT = "paidtwice-journal"
VERSION = 1
SEED_DERIVED = "derived from the invocation id (restate-server's default)"
STATUSES = ("paused", "running", "completed", "all")
"""What `capture --status` selects; running includes backing-off and suspended invocations."""


class JournalFileError(UsageError):
    """A journal file that cannot be read, or is not a paidtwice journal."""


@dataclass(frozen=True)
class RecordedEntry:
    """One entry of a captured journal, with its bytes."""

    index: int
    """Position in the journal (commands and notifications); 0 is the input."""
    type: str
    """Entry type as sys_journal writes it, e.g. "Command: Run", "Notification: Sleep"."""
    name: str
    """The step's name ("weather"), "" where the entry has none."""
    raw: bytes
    """`sys_journal.raw`: the protobuf body of the entry's protocol message."""
    appended_at: str
    """When the server appended it (RFC 3339)."""


@dataclass(frozen=True)
class JournalFile:
    """One invocation's journal as captured, enough to replay it without a server."""

    invocation_id: str
    """The invocation."""
    service: str
    """Its service."""
    handler: str
    """Its handler."""
    key: str | None
    """The virtual object's or workflow's key; None for a plain service."""
    protocol_version: int
    """The service protocol version the invocation was pinned to."""
    status: str
    """Its status when captured."""
    deployment_id: str | None
    """The deployment it was pinned to, if it had started."""
    random_seed: int | None
    """The StartMessage's random seed; None when it cannot be known."""
    random_seed_source: str
    """Where the seed came from, or why it is unknown."""
    entries: tuple[RecordedEntry, ...]
    """Every entry, by index."""
    captured_from: str = ""
    """The admin URL it was read from."""
    captured_at: str = ""
    """When it was captured (UTC)."""
    path: Path | None = None
    """The file it was read from, if any."""

    @property
    def complete(self) -> bool:
        """Whether the journal holds the handler's output (the invocation returned)."""
        return any(entry.type == "Command: Output" for entry in self.entries)

    def journal(self) -> list[JournalEntry]:
        """The entries as the journal reader (`explain`) reads them."""
        return [JournalEntry(e.index, e.type, e.name, e.appended_at) for e in self.entries]

    def prefix(self, last_index: int) -> JournalFile:
        """The journal as it stood with entries 0..last_index."""
        kept = tuple(entry for entry in self.entries if entry.index <= last_index)
        return JournalFile(
            **{**_fields(self), "entries": kept, "status": f"prefix of {self.status}", "path": None}
        )


def _fields(journal: JournalFile) -> dict[str, Any]:
    return {name: getattr(journal, name) for name in journal.__dataclass_fields__}


def to_json(journal: JournalFile) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "invocation_id": journal.invocation_id,
        "service": journal.service,
        "handler": journal.handler,
        "key": journal.key,
        "protocol_version": journal.protocol_version,
        "status": journal.status,
        "deployment_id": journal.deployment_id,
        "random_seed": None if journal.random_seed is None else str(journal.random_seed),
        "random_seed_source": journal.random_seed_source,
        "captured_from": journal.captured_from,
        "captured_at": journal.captured_at,
        "entries": [
            {
                "index": e.index,
                "type": e.type,
                "name": e.name,
                "appended_at": e.appended_at,
                "raw": base64.b64encode(e.raw).decode(),
            }
            for e in journal.entries
        ],
    }


def save_journal(path: Path, journal: JournalFile) -> Path:
    """Write a journal file atomically; returns its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(to_json(journal), indent=1) + "\n")
    tmp.replace(path)
    return path


def _entry(raw: Any, where: str, number: int) -> RecordedEntry:
    """One entry of a journal file; its error message is made only for an entry that is wrong
    (`replay-check DIR` reads thousands)."""
    if not isinstance(raw, dict):
        raise JournalFileError(f"{where} entry {number} is not an object")
    body, index, kind = raw.get("raw"), raw.get("index"), raw.get("type")
    if not isinstance(body, str):
        body = _require(raw, "raw", str, f"{where} entry {number}")  # raises, with its message
    try:
        decoded = binascii.a2b_base64(body, strict_mode=True)
    except ValueError:  # binascii.Error, or a character that is not ASCII
        raise JournalFileError(f"{where} entry {number}: raw is not base64") from None
    if type(index) is not int or not isinstance(kind, str):
        at = f"{where} entry {number}"
        _require(raw, "index", int, at)
        _require(raw, "type", str, at)
    return RecordedEntry(
        index=index,  # type: ignore[arg-type]  # an int, checked above
        type=kind,  # type: ignore[arg-type]  # a str, checked above
        name=str(raw.get("name") or ""),
        raw=decoded,
        appended_at=str(raw.get("appended_at") or ""),
    )


def _require(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise JournalFileError(f"{where}: field {key!r} is missing or not a {_kind_name(kind)}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join({str: "string", int: "integer", list: "list", type(None): "null"}[k] for k in kinds)


def load_journal(path: Path) -> JournalFile:
    """Read a journal file; JournalFileError (one line) if it is unreadable or not a paidtwice journal."""
    try:
        text = path.read_text()
    except OSError as err:
        raise JournalFileError(f"cannot read journal file {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise JournalFileError(f"journal file {path} is not text") from None
    try:
        data = json.loads(text)
    except ValueError as err:
        raise JournalFileError(f"journal file {path} is not JSON: {err}") from None
    where = f"journal file {path}"
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise JournalFileError(f'{where} is not a paidtwice journal (no "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise JournalFileError(f"{where} has version {data.get('version')!r}; this paidtwice reads {VERSION}")
    seed_text = data.get("random_seed")
    try:
        seed = None if seed_text is None else int(seed_text)
    except (TypeError, ValueError):
        raise JournalFileError(f"{where}: random_seed {seed_text!r} is not an integer") from None
    listed = _require(data, "entries", list, where)
    entries = [_entry(raw, where, number) for number, raw in enumerate(listed)]
    if [e.index for e in entries] != list(range(len(entries))):
        raise JournalFileError(f"{where}: entries are not indexed 0, 1, 2, ... in order")
    key = data.get("key")
    return JournalFile(
        invocation_id=_require(data, "invocation_id", str, where),
        service=_require(data, "service", str, where),
        handler=_require(data, "handler", str, where),
        key=key if isinstance(key, str) else None,
        protocol_version=_require(data, "protocol_version", int, where),
        status=str(data.get("status") or ""),
        deployment_id=data.get("deployment_id") if isinstance(data.get("deployment_id"), str) else None,
        random_seed=seed,
        random_seed_source=str(data.get("random_seed_source") or ""),
        entries=tuple(entries),
        captured_from=str(data.get("captured_from") or ""),
        captured_at=str(data.get("captured_at") or ""),
        path=path,
    )


def journal_paths(paths: Iterable[Path]) -> list[Path]:
    """The journal files named, directories expanded to their *.json files (sorted)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*.json") if p.is_file()))
        else:
            found.append(path)
    return found


_INVOCATION_SQL = (
    "SELECT id, target, target_service_name, target_service_key, target_handler_name, status, "
    "pinned_deployment_id, pinned_service_protocol_version, modified_at FROM sys_invocation"
)


def _journal_file(sql: SqlClient, row: dict[str, Any], *, seed_known: bool) -> JournalFile:
    invocation_id = str(row["id"])
    rows = sql.query(
        "SELECT index, entry_type, name, appended_at, version, raw "
        f"FROM sys_journal WHERE id = '{invocation_id}' ORDER BY index"
    )
    old = [r for r in rows if int(r.get("version") or 0) < 2]
    if old:
        raise UsageError(
            f"invocation {invocation_id} has journal entries of version {old[0].get('version')}; "
            "only version 2 entries (service protocol v4 and later) can be replayed"
        )
    entries = tuple(
        RecordedEntry(
            index=int(r["index"]),
            type=str(r["entry_type"]),
            name=str(r.get("name") or ""),
            # /query answers a binary column in hex.
            raw=bytes.fromhex(str(r.get("raw") or "")),
            appended_at=str(r.get("appended_at") or ""),
        )
        for r in rows
    )
    version = row.get("pinned_service_protocol_version")
    if version is None:
        raise UsageError(f"invocation {invocation_id} has not started on a deployment; nothing to replay")
    return JournalFile(
        invocation_id=invocation_id,
        service=str(row.get("target_service_name") or ""),
        handler=str(row.get("target_handler_name") or ""),
        key=row.get("target_service_key"),
        protocol_version=int(version),
        status=str(row.get("status") or ""),
        deployment_id=row.get("pinned_deployment_id"),
        random_seed=random_seed(invocation_id) if seed_known else None,
        random_seed_source=SEED_DERIVED
        if seed_known
        else "unknown: the server draws unique random seeds (experimental-enable-unique-random-seeds)",
        entries=entries,
        captured_from=sql.url,
        captured_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )


def capture_journal(sql: SqlClient, invocation_id: str, *, seed_known: bool = True) -> JournalFile:
    """One invocation's journal, read from the server's SQL tables."""
    sql.invocation(invocation_id)  # checks the id's form
    rows = sql.query(f"{_INVOCATION_SQL} WHERE id = '{invocation_id}'")
    if not rows:
        raise NotFound(f"no invocation {invocation_id} on the server at {sql.url}")
    return _journal_file(sql, rows[0], seed_known=seed_known)


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def capture(
    sql: SqlClient,
    *,
    service: str,
    handler: str | None = None,
    status: str = "all",
    last: int | None = None,
    seed_known: bool = True,
    on_skip: Callable[[str], None] | None = None,
) -> list[JournalFile]:
    """The journals of a service's invocations, the most recently modified first.

    An invocation whose journal cannot be replayed (entries of an old journal version) is left out, and
    `on_skip` hears why."""
    if status not in STATUSES:
        raise UsageError(f"unknown status {status!r} (known: {', '.join(STATUSES)})")
    where = [f"target_service_name = {_quoted(service)}", "pinned_service_protocol_version IS NOT NULL"]
    if handler:
        where.append(f"target_handler_name = {_quoted(handler)}")
    if status == "running":
        where.append("status IN ('running', 'backing-off', 'suspended')")
    elif status != "all":
        where.append(f"status = {_quoted(status)}")
    limit = f" LIMIT {int(last)}" if last else ""
    rows = sql.query(f"{_INVOCATION_SQL} WHERE {' AND '.join(where)} ORDER BY modified_at DESC{limit}")
    journals = []
    for row in rows:
        try:
            journals.append(_journal_file(sql, row, seed_known=seed_known))
        except UsageError as err:
            if on_skip is not None:
                on_skip(str(err))
    return journals


def save_all(directory: Path, journals: Sequence[JournalFile]) -> list[Path]:
    """One file per journal in `directory`, named by invocation id."""
    directory.mkdir(parents=True, exist_ok=True)
    return [save_journal(directory / f"{j.invocation_id}.json", j) for j in journals]


def save_invocation(sql: SqlClient, directory: Path, name: str, invocation_id: str) -> Path:
    """Capture one invocation's journal into `directory/name.json`."""
    return save_journal(directory / f"{name}.json", capture_journal(sql, invocation_id))


def save_with_prefix(
    sql: SqlClient,
    directory: Path,
    name: str,
    invocation_id: str,
    entries_at_kill: int,
    *,
    service: str | None = None,
) -> tuple[Path, Path]:
    """The final journal as `name.json` and, beside it, the prefix it held when the kill landed
    (`name.prefix.json`, its first `entries_at_kill` entries: a journal only grows). `service` names the
    service as the code does, where the lab ran it under a name of its own."""
    final = capture_journal(sql, invocation_id)
    if service is not None:
        # Its calls too: the run served the app's services under names of its own (`_untree`).
        final = as_code_names(final, final.service, service)
        final = JournalFile(**{**_fields(final), "service": service})
    prefix = final.prefix(entries_at_kill - 1)
    return (
        save_journal(directory / f"{name}.json", final),
        save_journal(directory / f"{name}.prefix.json", prefix),
    )
