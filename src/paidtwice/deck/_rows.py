"""Run any mix of deck rows (experiments, curves, walks) on one lab, all at once or one at a time.

A row that kills a node of the lab's cluster runs after the others, alone. Each finished record is handed to
`on_record` as soon as it exists, so a caller can put it on disk before anything else finishes. A row that
fails stops the others, and its own error, under its name, is what is raised (`run_together`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from paidtwice.deck._experiments import Comparison, Curve, Experiment, Row, Walk
from paidtwice.deck._together import named_failure, run_together
from paidtwice.results import Record

if TYPE_CHECKING:
    from paidtwice.deck._runner import Deck

__all__ = ["run_rows"]


def _run_row(deck: Deck, row: Row) -> Record:
    if isinstance(row, Experiment):
        return deck.run(row)
    if isinstance(row, Curve):
        return deck.run_curve(row)
    if isinstance(row, Walk):
        return deck.run_walk(row)
    if isinstance(row, Comparison):
        return deck.run_comparison(row)
    raise TypeError(f"not a deck row: {row!r}")


def run_rows(
    deck: Deck,
    rows: Sequence[Row],
    *,
    concurrent: bool = True,
    on_record: Callable[[Record], None] | None = None,
) -> list[Record]:
    """Run the rows; returns their records in the rows' order."""
    lock = threading.Lock()

    def run(row: Row) -> Record:
        record = _run_row(deck, row)
        if on_record is not None:
            with lock:
                on_record(record)
        return record

    if not concurrent:
        return [_named(row, run) for row in rows]
    # A node killed under one row stalls every invocation its partitions hold, whichever row made them:
    # on the lab's own cluster, such a row runs alone, after the others.
    alone = [row for row in rows if deck.lab.cluster > 1 and _kills_a_node(row)]
    together = [row for row in rows if row not in alone]
    done = run_together(
        [(row.name, functools.partial(run, row)) for row in together],
        cancelled=deck.lab.cancelled,
        thread_name="paidtwice-row",
    )
    records = {id(row): record for row, record in zip(together, done, strict=True)}
    records.update({id(row): _named(row, run) for row in alone})
    return [records[id(row)] for row in rows]


def _named(row: Row, run: Callable[[Row], Record]) -> Record:
    """Run one row; its error, if it fails, under its name."""
    try:
        return run(row)
    except Exception as error:
        raised = named_failure(row.name, error)
        if raised is error:
            raise
        raise raised from error


def _kills_a_node(row: Row) -> bool:
    return isinstance(row, Experiment) and row.fault.nodes > 1
