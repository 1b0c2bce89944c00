"""The kinds of record paidtwice writes, in one table: each one's tag, its class, and how it is read back.

Every record is written as JSON with the results format ("format") and its kind ("record") first, then its
class's fields, then any figures derived from them for readers of the JSON alone (`Kind.derived`). A record
of a kind nested in another (a curve's runs, a walk's stuck run) is written tagged too. Kinds read back
together form a group (`groups()`): a field of `Results`, a schema file, a page of the report.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from paidtwice.results._deck import ComparisonRecord, CurveRecord, RecoveryRecord, RunRecord
from paidtwice.results._replay import ReplayResult
from paidtwice.results._soak import SoakRecord
from paidtwice.results._sweep import PointResult
from paidtwice.results._watch import WatchSnapshot

__all__ = [
    "RESULTS_FORMAT",
    "Group",
    "Kind",
    "groups",
    "kind_of",
    "kinds",
    "record_json",
    "tagged",
    "to_jsonable",
]

RESULTS_FORMAT = 2
"""Version of the JSON results paidtwice writes: each record carries it as "format", beside what it is as
"record" (see `kinds()`).
Format 1 (no "format" field) had no times on model-call ends, attempt ends, the kill or journal entries."""


def _no_more(record: Any) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Group:
    """Kinds of record read back together: what `paidtwice report` makes one part of its page of."""

    name: str
    """The field of `Results` its records are read into; `paidtwice report` finds their page by it."""
    word: str
    """What the report's title calls them ("deck", "sweep")."""
    schema: str
    """The schema file that describes them (docs/reference/schemas/SCHEMA.schema.json)."""
    title: str
    """That schema's title."""


@functools.cache
def groups() -> tuple[Group, ...]:
    """Every group of kinds, in the order the report's page shows them."""
    results = "paidtwice results: the records of deck, run and sweep"
    return (
        Group("records", "deck", "results", results),
        Group("points", "sweep", "results", results),
        Group("replays", "replay-check", "replay-check", "paidtwice replay-check records"),
        Group("soaks", "soak", "soak", "paidtwice soak record"),
        Group("watches", "watch", "watch", "paidtwice watch snapshot"),
    )


@dataclass(frozen=True)
class Kind:
    """One kind of record."""

    name: str
    """What the record carries as "record" ("run", "sweep-point")."""
    cls: type[Any]
    """Its class."""
    group: str
    """The group it is read back in (`Group.name`: the field of `Results` its records are read into)."""
    whole_file: bool = False
    """A file holds one such record, as a JSON object, instead of a list of records."""
    derived: Callable[[Any], dict[str, Any]] = _no_more
    """Fields written beside the class's own, or in their place (same name), from the record."""
    derived_schema: dict[str, Any] = field(default_factory=dict)
    """The JSON Schema of each field `derived` adds, by name (docs/reference/schemas/)."""


def _run(run: RunRecord) -> dict[str, Any]:
    # The figures a row leaves open are left out, not written as null.
    return {"expected": {k: v for k, v in to_jsonable(run.expected).items() if v is not None}}


def _point(point: PointResult) -> dict[str, Any]:
    return {"pays_twice": point.pays_twice}


_POINT_SCHEMA = {
    "pays_twice": {"description": "Whether the point paid again for completed work.", "type": "boolean"}
}


def _replay(result: ReplayResult) -> dict[str, Any]:
    return {
        "calls_during_replay": result.calls_during_replay,
        "attempted_commands": list(result.attempted_commands),
    }


_REPLAY_SCHEMA = {
    "calls_during_replay": {
        "description": "Model calls production pays for again on every replay of this journal.",
        "type": "integer",
    },
    "attempted_commands": {
        "description": "For a divergence: what the code attempted by command index, 0 to `index`.",
        "type": "array",
        "items": {"type": "string"},
    },
}


@functools.cache
def kinds() -> tuple[Kind, ...]:
    """Every kind of record, by the command that writes it."""
    return (
        # deck, run
        Kind("run", RunRecord, "records", derived=_run),
        Kind("curve", CurveRecord, "records"),
        Kind("walk", RecoveryRecord, "records"),
        Kind("comparison", ComparisonRecord, "records"),
        # sweep, check
        Kind("sweep-point", PointResult, "points", derived=_point, derived_schema=_POINT_SCHEMA),
        Kind("replay-check", ReplayResult, "replays", derived=_replay, derived_schema=_REPLAY_SCHEMA),
        Kind("soak", SoakRecord, "soaks", whole_file=True),
        Kind("watch", WatchSnapshot, "watches", whole_file=True),
    )


@functools.cache
def _by_class() -> dict[type[Any], Kind]:
    return {kind.cls: kind for kind in kinds()}


def kind_of(record: Any) -> Kind:
    """The kind of a record; `TypeError` for an object that is none."""
    try:
        return _by_class()[type(record)]
    except KeyError:
        raise TypeError(f"{type(record).__name__} is not a kind of paidtwice record") from None


def tagged(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """A record's JSON with the results format and its kind first, so a reader knows what it holds."""
    return {"format": RESULTS_FORMAT, "record": kind, **data}


def record_json(record: Any) -> dict[str, Any]:
    """A record as it is written: tagged with its kind, its fields, then the figures derived from them."""
    kind = kind_of(record)
    return tagged(kind.name, {**_fields_json(record), **kind.derived(record)})


def to_jsonable(value: Any) -> Any:
    """Plain JSON types from dataclasses, tuples and dicts, nested (no record is tagged)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return _containers(value, to_jsonable)


def _fields_json(record: Any) -> dict[str, Any]:
    return {f.name: _nested_json(getattr(record, f.name)) for f in dataclasses.fields(record)}


def _nested_json(value: Any) -> Any:
    if type(value) in _by_class():
        return record_json(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _fields_json(value)
    return _containers(value, _nested_json)


def _containers(value: Any, each: Callable[[Any], Any]) -> Any:
    if isinstance(value, dict):
        return {str(k): each(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [each(v) for v in value]
    return value
