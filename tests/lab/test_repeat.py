"""The lab's counts do not drift: the deck's first four runs, three times in a row, give the same figures."""

from __future__ import annotations

from paidtwice.deck import EXPERIMENTS, Deck
from paidtwice.lab import Lab
from paidtwice.results import RunRecord

FIRST_FOUR = [row for row in EXPERIMENTS if row.section == "lab"][:4]


def figures(record: RunRecord) -> tuple[object, ...]:
    return (
        record.status,
        record.model_calls,
        record.tool_calls,
        record.attempts,
        record.mismatches,
        tuple(entry.label() for entry in record.journal),
        tuple((line.turn, line.decision, line.delivered) for line in record.model_log),
    )


def test_three_runs_in_a_row_give_the_same_counts(lab: Lab) -> None:
    assert [row.name for row in FIRST_FOUR] == [
        "clean",
        "naive-kill-in-pause",
        "journaled-kill-in-pause",
        "journaled-kill-mid-call",
    ]
    rounds = [Deck(lab).run_many([(row, None) for row in FIRST_FOUR], concurrent=True) for _ in range(3)]
    for records in rounds:
        assert all(record.matches for record in records), [r.name for r in records if not r.matches]
    first = [figures(record) for record in rounds[0]]
    for records in rounds[1:]:
        assert [figures(record) for record in records] == first
