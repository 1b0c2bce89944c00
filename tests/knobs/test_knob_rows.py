"""The rows on Restate's newer knobs (explicit recovery, the retry policy, protocol v7), on real servers: each
claim measured, never assumed."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from paidtwice.agent import weather
from paidtwice.cli import cli
from paidtwice.cli._lab import _rows as deck_rows
from paidtwice.deck import Deck
from paidtwice.deck._experiments import (
    CURVES,
    EXPERIMENTS,
    PROTOCOL_V7,
    SCENARIOS,
    RetryPolicy,
    experiment_by_name,
)
from paidtwice.lab import Lab
from paidtwice.report._plot import curve_svg_markup
from paidtwice.report._text import format_curve, format_run
from paidtwice.results import ComparisonRecord, CurveRecord, Record, RunRecord

ROWS = ("explicit-recovery-changed", "retry-policy-curve", "changed-for-good-protocol-v7")
KNOB_ROWS = ("explicit-recovery-kill-in-pause", "explicit-recovery-changed", "retry-policy-curve")


@pytest.fixture(scope="module")
def knob_records(lab: Lab) -> dict[str, Record]:
    """The comparison and the curve at once on the session's lab; then the protocol-v7 run, on a server of
    its own, alone: a server starting up while the curve's retries land would make them late."""
    records = Deck(lab).run_rows([experiment_by_name(name) for name in ROWS[:2]])
    records += Deck(lab).run_rows([experiment_by_name(ROWS[2])])
    return {record.name: record for record in records}


def test_the_three_rows_are_listed_by_their_names_and_run_by_the_deck() -> None:
    done = CliRunner().invoke(cli, ["experiments"])
    assert done.exit_code == 0, done.output
    names = {line.split()[0] for line in done.output.splitlines() if line and not line[0].isspace()}
    assert set(KNOB_ROWS) <= names
    assert "max_attempts 1, 3, 5, 10, 20, then pause/kill" in done.output
    assert set(KNOB_ROWS) <= {row.name for row in deck_rows(())}


def test_explicit_recovery_pays_the_journaled_model_call_and_the_tool_again(
    deck_records: dict[str, RunRecord],
) -> None:
    record = deck_records["explicit-recovery-kill-in-pause"]
    replayed = deck_records["journaled-kill-in-pause"]
    assert record.explicit_recovery and not replayed.explicit_recovery
    assert (record.model_calls, record.tool_calls) == (3, 2)
    assert (replayed.model_calls, replayed.tool_calls) == (2, 1)
    # The retry asked the first turn again (a journaled call, paid again), then went on to the second.
    assert [line.turn for line in record.model_log] == [1, 1, 2]
    assert record.mismatches == 0 and record.status == "completed"
    # Nothing replayed: the retry's commands are appended after the killed attempt's.
    runs = [e.name for e in record.journal if e.type == "Command: Run"]
    assert runs == ["model", "weather", "model", "weather", "model"]
    assert sum(1 for e in record.journal if e.type == "Command: Sleep") == 2
    assert record.matches
    assert "Knobs: explicit_recovery" in format_run(record)


def test_explicit_recovery_ends_the_mismatch_loop_and_repeats_every_effect(
    knob_records: dict[str, Record], lab: Lab
) -> None:
    record = knob_records["explicit-recovery-changed"]
    assert isinstance(record, ComparisonRecord)
    changed, unkeyed, keyed = record.runs
    # No RT0016: the retry took the new answer's path (answered at once), the tool's first run unused.
    assert changed.mismatches == 0 and changed.mismatch is None
    assert changed.status == "completed" and (changed.model_calls, changed.tool_calls) == (2, 1)
    assert [line.turn for line in changed.model_log] == [1, 1]
    assert changed.model_log[0].answer != changed.model_log[1].answer
    # Every effect again: the booking journaled before the kill is made again; once with a stable key.
    assert (unkeyed.booking_effects, keyed.booking_effects) == (2, 1)
    bookings = lab.stub.ledger.bookings(keyed.lane, keyed.invocation_id)
    assert len(bookings) == 2 and bookings[0].key == bookings[1].key == f"{keyed.invocation_id}:book"
    assert record.checks[0].ok and record.matches


def test_retry_policy_curve_bills_what_the_policy_predicts(knob_records: dict[str, Record]) -> None:
    curve = knob_records["retry-policy-curve"]
    assert isinstance(curve, CurveRecord) and curve.varies == "max attempts"
    row = next(c for c in CURVES if c.name == "retry-policy-curve")
    wanted = {(p.max_attempts, p.on_max_attempts) for p in row.policies}
    assert {(1, "pause"), (3, "kill"), (5, "pause"), (10, "kill"), (20, "pause")} <= wanted
    assert [(p.max_attempts, p.on_max_attempts) for p in curve.points] == [
        (p.max_attempts, p.on_max_attempts) for p in row.policies
    ]
    for point, run in zip(curve.points, curve.runs, strict=True):
        assert point.agrees, point
        assert point.predicted_model_calls == point.model_calls, point
        assert point.outcome == {"pause": "paused", "kill": "failed"}[point.on_max_attempts], point
        # The attempts are polled from sys_invocation (and seen by the agent): a poll can miss the last retry
        # before the policy pauses or kills, so the count is bounded, not exact; the bill above is exact.
        assert run.attempts_reached_agent + 1 <= run.attempts <= point.max_attempts, point
        assert run.retry_policy.startswith(f"{point.max_attempts} attempts then {point.on_max_attempts}")
    by_attempts = {(p.max_attempts, p.on_max_attempts): p.model_calls for p in curve.points}
    assert by_attempts[(20, "pause")] == by_attempts[(20, "kill")] == 18
    assert by_attempts[(1, "pause")] == 1
    assert curve.matches
    svg = curve_svg_markup(curve)
    assert "paid model calls against max_attempts" in svg and 'stroke-dasharray="6 4"' in svg
    assert "20, then kill" in format_curve(curve)


def test_protocol_v7_on_the_rows_own_server_does_not_stop_a_mismatch_at_once(
    knob_records: dict[str, Record], lab: Lab
) -> None:
    record = knob_records["changed-for-good-protocol-v7"]
    assert isinstance(record, RunRecord)
    assert record.server_flags == (f"{PROTOCOL_V7}=true",)
    assert record.protocol_version == 7
    # The flag went on the row's server only: the lab's shared server runs protocol 6.
    assert PROTOCOL_V7 not in getattr(lab.server, "extra_env", {})
    assert (record.status, record.model_calls, record.mismatches) == ("paused", 18, 17)
    assert record.matches


def test_a_rows_retry_policy_reaches_the_agent_as_written() -> None:
    policy = RetryPolicy(5, "kill", initial_interval=0.1, max_interval=0.4, exponentiation_factor=3.0)
    built = weather.retry_policy(policy.to_env())
    assert (built.max_attempts, built.on_max_attempts) == (5, "kill")
    assert built.initial_interval is not None and built.initial_interval.total_seconds() == 0.1
    assert built.max_interval is not None and built.max_interval.total_seconds() == 0.4
    assert built.exponentiation_factor == 3.0
    assert weather.retry_policy("") is weather.DECK_RETRY_POLICY
    assert json.loads(policy.to_env())["on_max_attempts"] == "kill"


def test_only_rows_that_need_a_flag_set_one() -> None:
    flagged = [row.name for row in (*EXPERIMENTS, *SCENARIOS) if row.server_flags]
    assert flagged == ["changed-for-good-protocol-v7"]
