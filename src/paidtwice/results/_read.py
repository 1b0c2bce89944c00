"""Read paidtwice's JSON results back into typed records.

Every record paidtwice writes carries the results format ("format") and its kind ("record", one of the table
in `_kinds`), and is read back into that kind's class. A file that is not a JSON list of such records (or the
one record of a soak's or a watch's file), or that was written in another format, is refused with a one-line
`UsageError`. Fields a record type gained after the file was written (with a default) take the default;
fields the reader does not know are ignored, so a newer paidtwice's extra figures do not stop an older report.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paidtwice._exceptions import UsageError
from paidtwice.results._deck import Mismatch, Record
from paidtwice.results._kinds import RESULTS_FORMAT, kinds
from paidtwice.results._replay import ReplayResult
from paidtwice.results._soak import SoakRecord
from paidtwice.results._sweep import PointResult
from paidtwice.results._watch import WatchSnapshot

__all__ = ["Results", "load_results"]


@dataclass(frozen=True)
class Results:
    """What a set of result files holds, by kind, in file order."""

    records: tuple[Record, ...]
    """Rows of a deck or a run: runs, curves, recovery walks, comparisons."""
    points: tuple[PointResult, ...]
    """Crash points of sweeps."""
    sources: tuple[str, ...]
    """The files read."""
    replays: tuple[ReplayResult, ...] = ()
    """Verdicts of `replay-check`, one per journal."""
    soaks: tuple[SoakRecord, ...] = ()
    """Soaks (`soak --json`), one per file."""
    watches: tuple[WatchSnapshot, ...] = ()
    """Snapshots of `watch --json`."""


class _Bad(Exception):
    """A value that does not fit its field's type."""


def load_results(paths: Sequence[Path]) -> Results:
    """Read result files written by `deck`, `run`, `sweep`, `soak`, `replay-check` or `watch` (`--json`)."""
    groups: dict[str, list[Any]] = {kind.group: [] for kind in kinds()}
    by_name = {kind.name: kind for kind in kinds()}
    for path in paths:
        for number, (name, data) in enumerate(_read(path), start=1):
            kind = by_name[name]
            try:
                groups[kind.group].append(_build(kind.cls, data))
            except _Bad as err:
                where = f"{path}: record {number} ({name})"
                raise UsageError(f"{where} is not a paidtwice result: {err}") from None
    read = {group: tuple(got) for group, got in groups.items()}
    return Results(sources=tuple(str(p) for p in paths), **read)


def _read(path: Path) -> list[tuple[str, dict[str, Any]]]:
    if path.is_dir():
        raise UsageError(
            f"{path} is a directory; give the results files in it ({path / '*.json'}), written by --json "
            "of deck, run, sweep, soak or replay-check"
        )
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"{path}: cannot be read ({err})") from None
    if not text.strip():
        raise UsageError(f"{path} is empty, not a paidtwice result (results are a JSON list of records)")
    try:
        data = json.loads(text)
    except ValueError as err:
        raise UsageError(f"{path} is not a paidtwice result: not JSON ({err})") from None
    if isinstance(data, dict) and {"invocation_id", "random_seed"} <= set(data):
        raise UsageError(
            f"{path} is a journal file (journal --save, capture), not a result: check it with "
            f"`paidtwice replay-check --app MODULE:APP {path} --json replay-check.json` and report that"
        )
    if (
        isinstance(data, list)
        and data
        and all(isinstance(item, dict) and {"code", "line", "message"} <= set(item) for item in data)
    ):
        raise UsageError(f"{path} is the output of paidtwice lint, not a result of a run")
    if isinstance(data, dict) and data.get("record") in {kind.name for kind in kinds() if kind.whole_file}:
        data = [data]  # a soak's or a watch snapshot's file holds its one record, not a list
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise UsageError(
            f"{path} is not a paidtwice result (results are a JSON list of records, from --json of "
            "deck, run, sweep, soak or replay-check)"
        )
    if not data:
        raise UsageError(f"{path} holds no records yet (the run that writes it finished none)")
    read = []
    for item in data:
        version = item.get("format")
        if version is None:
            if {"invocation_id"} <= set(item) and ({"name", "mode"} <= set(item) or "crash_point" in item):
                raise UsageError(
                    f"{path} is a paidtwice result of an older format (1, without timelines); this "
                    f"paidtwice reads format {RESULTS_FORMAT}: run the experiment again"
                )
            if {"invocation_id", "verdict", "outside_calls"} <= set(item):
                raise UsageError(
                    f"{path} is a replay-check result of an older format (1, without the divergence's "
                    f"commands); this paidtwice reads format {RESULTS_FORMAT}: run replay-check --json again"
                )
            raise UsageError(f'{path} is not a paidtwice result (its records have no "format" field)')
        if version != RESULTS_FORMAT:
            raise UsageError(
                f"{path} is a paidtwice result of format {version}; this paidtwice reads format "
                f"{RESULTS_FORMAT}: use the paidtwice that wrote it, or run the experiment again"
            )
        kind = item.get("record")
        if kind not in {kind.name for kind in kinds()}:
            raise UsageError(f"{path} holds a record of unknown kind {kind!r}")
        read.append((str(kind), item))
    return read


T = typing.TypeVar("T")


def _build(cls: type[T], data: Any) -> T:
    if not isinstance(data, dict):
        raise _Bad(f"{cls.__name__} should be an object, not {type(data).__name__}")
    if cls in (Mismatch, ReplayResult):
        data = _older_index(data)
    hints = _hints(cls)  # type: ignore[arg-type]  # a class is hashable; mypy does not see type[T] as such
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        if field.name in data:
            try:
                values[field.name] = _convert(hints[field.name], data[field.name])
            except _Bad as err:
                raise _Bad(f"{field.name}: {err}") from None
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise _Bad(f"{cls.__name__} has no {field.name!r}")
    return cls(**values)


def _older_index(data: dict[str, Any]) -> dict[str, Any]:
    """A mismatch written before "command_index" existed named the SDK's command index as "index": keep it as
    the command index, and the entry as unknown rather than a wrong one."""
    if "command_index" in data or data.get("index") is None:
        return data
    return {**data, "command_index": data["index"], "index": None}


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    # Resolved once per record type: a sweep's points hold thousands of nested records.
    return typing.get_type_hints(cls)


def _convert(hint: Any, value: Any) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _convert(arg, value)
            except _Bad:
                continue
        raise _Bad(f"{value!r} fits none of {hint}")
    if dataclasses.is_dataclass(hint):
        return _build(hint, value)  # type: ignore[arg-type]
    if origin is typing.Literal:
        if value in args:
            return value
        raise _Bad(f"expected one of {', '.join(map(repr, args))}, got {value!r:.40}")
    if origin is tuple:
        if not isinstance(value, list):
            raise _Bad(f"expected a list, got {type(value).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v) for v in value)
        if len(args) != len(value):
            raise _Bad(f"expected {len(args)} items, got {len(value)}")
        return tuple(_convert(a, v) for a, v in zip(args, value, strict=True))
    if origin is dict:
        if not isinstance(value, dict):
            raise _Bad(f"expected an object, got {type(value).__name__}")
        return {str(k): _convert(args[1], v) for k, v in value.items()}
    if hint is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if hint is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if hint in (str, bool) and isinstance(value, hint):
        return value
    raise _Bad(f"expected {getattr(hint, '__name__', hint)}, got {value!r:.40}")
