"""The deck's checks: each figure a row expects, against what its run measured."""

from __future__ import annotations

from collections.abc import Sequence

from paidtwice.deck._experiments import Expected
from paidtwice.results import Check, RunRecord

__all__ = ["compare", "short_journal"]


def short_journal(labels: Sequence[str]) -> str:
    """ "Input, Run weather, (Run), Sleep, (Sleep), Output": commands, and notifications in parentheses."""
    parts = []
    for label in labels:
        kind, _, rest = label.partition(": ")
        parts.append(rest if kind == "Command" else f"({rest})")
    return ", ".join(parts)


def compare(expected: Expected, record: RunRecord) -> tuple[Check, ...]:
    """Each figure the deck reports, against the record."""
    checks = [
        Check("status", expected.status, record.status, expected.status == record.status),
        _count("model calls", expected.model_calls, record.model_calls),
        _count("tool calls", expected.tool_calls, record.tool_calls),
    ]
    if expected.journal is not None:
        measured = tuple(entry.label() for entry in record.journal)
        checks.append(
            Check(
                "journal",
                short_journal(expected.journal),
                short_journal(measured),
                measured == expected.journal,
            )
        )
    if expected.model_entries is not None:
        entries = tuple(e.index for e in record.journal if e.type == "Command: Run" and e.name == "model")
        checks.append(
            Check(
                "model at journal entries",
                ", ".join(map(str, expected.model_entries)),
                ", ".join(map(str, entries)),
                entries == expected.model_entries,
            )
        )
    if expected.repeated_answer is not None:
        a, b = expected.repeated_answer
        log = record.model_log
        same = len(log) >= max(a, b) and log[a - 1].answer == log[b - 1].answer
        checks.append(
            Check(
                f"call {b} repeats call {a} word for word",
                "yes",
                "yes" if same else "no",
                same,
            )
        )
    if expected.booking_effects is not None:
        checks.append(_count("booking effects", expected.booking_effects, record.booking_effects))
    if expected.undelivered is not None:
        undelivered = tuple(line.call for line in record.model_log if line.delivered is False)
        checks.append(
            Check(
                "answers never delivered",
                ", ".join(map(str, expected.undelivered)),
                ", ".join(map(str, undelivered)) or "none",
                undelivered == expected.undelivered,
            )
        )
    for figure, want, got in (
        ("mismatches (RT0016)", expected.mismatches, record.mismatches),
        ("attempts", expected.attempts, record.attempts),
        (
            "retries that reached the agent",
            expected.attempts_reached_agent,
            record.attempts_reached_agent,
        ),
    ):
        if want is not None:
            checks.append(_count(figure, want, got))
    return tuple(checks)


def _count(figure: str, want: int, got: int) -> Check:
    return Check(figure, str(want), str(got), want == got)
