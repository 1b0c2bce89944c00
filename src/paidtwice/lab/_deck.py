"""Run any mix of deck rows (experiments, curves, walks) on one lab, all at once or one at a time.

Each finished record is handed to `on_record` as soon as it exists, so a caller can put it on disk before
anything else finishes.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from paidtwice.lab._experiments import Comparison, Curve, Experiment, Row, Walk
from paidtwice.lab._records import Record
from paidtwice.lab._runner import Lab
from paidtwice.lab._walks import run_walk

__all__ = ["run_rows"]


def _one(lab: Lab, row: Row) -> Record:
    if isinstance(row, Experiment):
        return lab.run(row)
    if isinstance(row, Curve):
        return lab.run_curve(row)
    if isinstance(row, Walk):
        return run_walk(lab, row)
    if isinstance(row, Comparison):
        return lab.run_comparison(row)
    raise TypeError(f"not a deck row: {row!r}")


def run_rows(
    lab: Lab,
    rows: Sequence[Row],
    *,
    concurrent: bool = True,
    on_record: Callable[[Record], None] | None = None,
) -> list[Record]:
    """Run the rows; returns their records in the rows' order."""
    lock = threading.Lock()

    def run(row: Row) -> Record:
        record = _one(lab, row)
        if on_record is not None:
            with lock:
                on_record(record)
        return record

    if not concurrent:
        return [run(row) for row in rows]
    with ThreadPoolExecutor(max_workers=max(1, len(rows)), thread_name_prefix="paidtwice-row") as pool:
        futures = [pool.submit(run, row) for row in rows]
        try:
            return [future.result() for future in futures]
        except BaseException:
            # Ctrl-C or a failed row: every other row's waits give up and its processes are killed.
            lab.cancelled.set()
            raise
