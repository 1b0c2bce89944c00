"""The journals of what a lab command measured, saved for `paidtwice replay-check`: each finished record's
invocations (`deck`, `run --save-journals`) and each swept point's (`sweep --save-journals`), captured while
the server that ran them still runs."""

from __future__ import annotations

import re
from pathlib import Path

from paidtwice.engine import SqlClient
from paidtwice.replay._journal import save_invocation, save_with_prefix
from paidtwice.results import CurveRecord, PointResult, Record, RecoveryRecord, RunRecord

__all__ = ["save_point_journals", "save_record_journals"]


def save_record_journals(sql: SqlClient, directory: Path, record: Record) -> None:
    """The journals of a finished record's invocations, one file each, named after the record."""
    runs = record.runs if isinstance(record, CurveRecord) else ()
    if isinstance(record, RunRecord):
        save_invocation(sql, directory, record.name, record.invocation_id)
    for i, run in enumerate(runs, start=1):
        save_invocation(sql, directory, f"{record.name}-{i}", run.invocation_id)
    if isinstance(record, RecoveryRecord):
        save_invocation(sql, directory, record.name, record.invocation_id)
        for i, step in enumerate(record.steps, start=1):
            if step.invocation_id and step.invocation_id != record.invocation_id:
                save_invocation(sql, directory, f"{record.name}-step{i}", step.invocation_id)


def save_point_journals(sql: SqlClient, directory: Path, point: PointResult) -> None:
    """A swept point's final journal (MODE-SCRIPT-NN.json) and, beside it, the journal as it stood when the
    kill landed (MODE-SCRIPT-NN.prefix.json)."""
    # A command's mode names its command: spaces and slashes stay out of the file's name.
    mode = re.sub(r"[^A-Za-z0-9._-]+", "_", point.mode).strip("_")
    name = f"{mode}-{point.script}-{point.order:02d}"
    # A user's service is saved under the name its code gives it, so replay-check reads the files against
    # that code as they are.
    save_with_prefix(
        sql, directory, name, point.invocation_id, point.journal_at_kill, service=point.service or None
    )
