"""Writing results: one sink every command writes its records through (`RecordSink`), each file replaced
atomically (a temporary file, synced, then renamed over it), so a reader never sees half a file, and a
finished experiment's record is on disk before the next one starts."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paidtwice.results._kinds import record_json

__all__ = [
    "DEFAULT_RESULTS",
    "RESULTS_ENV",
    "RecordSink",
    "default_records_path",
    "results_text",
    "write_record",
    "write_results",
]

DEFAULT_RESULTS = Path("paidtwice-results")
"""Where a command's records go when it is given no file (`--json`)."""
RESULTS_ENV = "PAIDTWICE_RESULTS"
"""The variable that moves `DEFAULT_RESULTS` (for CI to collect)."""


def default_records_path(results_dir: Path, stem: str) -> Path:
    """Where a command's records go when it is given no file: RESULTS_DIR/STEM-TIME-PID.json."""
    # Two labs started at once in one directory must not write the same file.
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return results_dir / f"{stem}-{stamp}-{os.getpid()}.json"


def results_text(records: Sequence[Any]) -> str:
    """Records as a results file holds them: a JSON list (what `--json -` prints)."""
    return json.dumps([record_json(r) for r in records], indent=2) + "\n"


class RecordSink:
    """One results file, written as records come: `add` puts a record on disk before the caller goes on
    (the whole list, replaced atomically), `one` writes a file's one record (a soak, a watch snapshot).

    Why the whole list and not JSON Lines appended: a JSON list is what every reader takes (`paidtwice
    report`, `--json -` piped to jq, the published schemas, records written by earlier releases), and a
    file replaced by rename is whole however the command is stopped. JSON Lines would append in O(1) but
    give the records a second format. The list costs a copy per record: 11 ms a record for 500 crash points
    (2.3 MiB) at load 10, against the seconds each point takes. The records added so far are kept as their
    JSON text in a file beside the results (`NAME.records`), not in memory; `publish=False` writes the
    results file at `close` only (a replay-check of thousands of journals, milliseconds each)."""

    def __init__(self, path: Path, *, publish: bool = True, results_dir: Path | None = None) -> None:
        self.path = path
        """The results file."""
        self.results_dir = results_dir
        """The command's results folder (--results-dir), where what it keeps beside its records goes; None:
        the default one."""
        self.publish = publish
        """Every `add` replaces the results file (else `close` does, once)."""
        self.added = 0
        """Records added since the file was last replaced whole."""
        self._body = path.with_name(path.name + ".records")

    @classmethod
    def at(cls, path: Path | None, *, results_dir: Path, stem: str, publish: bool = True) -> RecordSink:
        """The sink of `path`, or of RESULTS_DIR/STEM-TIME-PID.json when no file was given."""
        return cls(path or default_records_path(results_dir, stem), publish=publish, results_dir=results_dir)

    def __enter__(self) -> RecordSink:
        return self

    def __exit__(self, *exc: object) -> None:
        """Complete on success; stopped half way, the results file keeps what was published (nothing more:
        never half a file) and the side file goes."""
        if exc[0] is None:
            self.close()
        else:
            self._body.unlink(missing_ok=True)

    def add(self, record: Any) -> None:
        """Append a record; with `publish`, the results file holds it (and every earlier one) on return."""
        text = json.dumps(record_json(record), indent=2).replace("\n", "\n  ")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._body.open("a" if self.added else "w") as body:
            body.write((",\n  " if self.added else "") + text)
        self.added += 1
        if self.publish:
            self._publish()

    def replace(self, records: Sequence[Any]) -> None:
        """The results file as exactly these records (a deck's rows in the deck's order once all ran); what
        is added next follows them."""
        self._body.unlink(missing_ok=True)
        self.added = 0
        publish, self.publish = self.publish, False
        try:
            for record in records:
                self.add(record)
        finally:
            self.publish = publish
        if self.added:
            self._publish()
        else:
            _replace(self.path, "[]\n")

    def one(self, record: Any) -> None:
        """The file's one record, as a JSON object (a soak, a watch snapshot), replacing the last."""
        _replace(self.path, json.dumps(record_json(record), indent=2) + "\n")

    def close(self) -> None:
        """The results file complete (an empty list if nothing was added since `replace`), the side file
        gone."""
        if self.added and not self.publish:
            self._publish()
        elif not self.added and not self.path.exists():
            _replace(self.path, "[]\n")
        self._body.unlink(missing_ok=True)

    def _publish(self) -> None:
        # The same bytes as `results_text` of the records added: json.dumps(list, indent=2) and a newline.
        staging = self.path.with_name(self.path.name + ".tmp")
        with staging.open("w") as out:
            out.write("[\n  ")
            with self._body.open() as body:
                shutil.copyfileobj(body, out)
            out.write("\n]\n")
        _sync_and_rename(staging, self.path)


def write_results(path: Path, records: Sequence[Any]) -> None:
    """Write records of any kinds as a JSON list."""
    RecordSink(path).replace(records)


def write_record(path: Path, record: Any) -> None:
    """Write the one record of a file that holds one (a soak, a watch snapshot), as a JSON object."""
    RecordSink(path).one(record)


def _replace(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    _sync_and_rename(tmp, path)


def _sync_and_rename(tmp: Path, path: Path) -> None:
    with tmp.open("rb") as handle:
        os.fsync(handle.fileno())
    tmp.replace(path)
