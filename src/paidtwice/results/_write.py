"""Writing results: every file replaced atomically (a temporary file, synced, then renamed over it), so a
reader never sees half a file, and a finished experiment's record is on disk before the next one starts."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paidtwice.results._kinds import record_json

__all__ = ["append_record", "results_text", "write_record", "write_results"]


def results_text(records: Sequence[Any]) -> str:
    """Records as a results file holds them: a JSON list (what `--json -` prints)."""
    return json.dumps([record_json(r) for r in records], indent=2) + "\n"


def write_results(path: Path, records: Sequence[Any]) -> None:
    """Write records of any kinds as a JSON list."""
    _replace(path, results_text(records))


def write_record(path: Path, record: Any) -> None:
    """Write the one record of a file that holds one (a soak, a watch snapshot), as a JSON object."""
    _replace(path, json.dumps(record_json(record), indent=2) + "\n")


def append_record(path: Path, records: list[Any], record: Any) -> None:
    """Add a finished record and rewrite the file before anything else runs."""
    records.append(record)
    write_results(path, records)


def _replace(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    with tmp.open("rb") as handle:
        os.fsync(handle.fileno())
    tmp.replace(path)
