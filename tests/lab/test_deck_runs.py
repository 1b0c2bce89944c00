"""The deck's runs on the real server: counts, journals and logs as the deck reports them."""

from __future__ import annotations

from paidtwice.agent import CLEAN_JOURNALED_JOURNAL, CLEAN_NAIVE_JOURNAL, weather
from paidtwice.deck import Backoff, predict_paid_calls
from paidtwice.results import RunRecord


def labels(record: RunRecord) -> tuple[str, ...]:
    return tuple(entry.label() for entry in record.journal)


def test_clean_run_makes_two_model_calls_and_journals_the_tool_and_pause(
    deck_records: dict[str, RunRecord],
) -> None:
    record = deck_records["clean"]
    assert record.status == "completed"
    assert (record.model_calls, record.tool_calls) == (2, 1)
    assert labels(record) == CLEAN_NAIVE_JOURNAL
    assert [e.index for e in record.journal] == list(range(6))
    assert record.attempts == 1
    assert record.answer
    assert record.matches


def test_naive_kill_in_pause_pays_for_the_first_decision_again(
    deck_records: dict[str, RunRecord],
) -> None:
    record = deck_records["naive-kill-in-pause"]
    assert record.status == "completed"
    assert (record.model_calls, record.tool_calls) == (3, 1)
    first, second, third = record.model_log
    assert second.turn == first.turn == 1
    assert second.answer == first.answer
    assert third.turn == 2
    assert labels(record) == CLEAN_NAIVE_JOURNAL
    assert record.down_time is not None and record.down_time >= record.restart_delay
    assert record.matches


def test_journaled_kill_in_pause_replays_recorded_answers(
    deck_records: dict[str, RunRecord],
) -> None:
    record = deck_records["journaled-kill-in-pause"]
    assert (record.model_calls, record.tool_calls) == (2, 1)
    assert labels(record) == CLEAN_JOURNALED_JOURNAL
    model_entries = [e.index for e in record.journal if e.name == "model"]
    assert model_entries == [1, 7]
    # The stub drifts: had the replay asked again, the words would differ.
    assert record.attempts_reached_agent >= 1
    assert record.matches


def test_journaled_kill_mid_call_pays_for_the_lost_call(
    deck_records: dict[str, RunRecord],
) -> None:
    record = deck_records["journaled-kill-mid-call"]
    assert (record.model_calls, record.tool_calls) == (3, 1)
    assert record.model_log[0].delivered is False
    assert all(line.delivered for line in record.model_log[1:])
    assert labels(record) == CLEAN_JOURNALED_JOURNAL
    assert record.matches


def test_runs_record_where_figures_come_from(deck_records: dict[str, RunRecord]) -> None:
    for record in deck_records.values():
        assert {"model_calls", "tool_calls", "attempts", "mismatches"} <= set(record.sources)
        assert all(check.ok for check in record.checks) == record.matches


def test_server_killed_in_pause_keeps_its_journal(deck_records: dict[str, RunRecord]) -> None:
    record = deck_records["server-kill-in-pause"]
    assert record.status == "completed"
    assert (record.model_calls, record.tool_calls) == (2, 1)
    assert labels(record) == CLEAN_JOURNALED_JOURNAL
    # The server's restart started a new attempt, which replayed the journal instead of asking again.
    assert record.attempts >= 2 and record.attempts_reached_agent >= 1
    assert record.matches


def test_retries_while_down_are_counted_as_the_policy_schedules_them(
    deck_records: dict[str, RunRecord],
) -> None:
    # Attempts made while the agent is down never reach it; they are counted from the retry count the server
    # sends with the next attempt that does. The policy says how many fit in the measured down time.
    backoff = Backoff.from_policy(weather.RETRY_POLICY)
    for name in ("naive-kill-in-pause", "journaled-kill-in-pause", "journaled-kill-mid-call"):
        record = deck_records[name]
        assert record.down_time is not None
        prediction = predict_paid_calls(backoff, record.down_time)
        assert prediction.fewest_down <= record.attempts_while_down <= prediction.most_down, record.name
        assert record.attempts == 1 + record.attempts_while_down + record.attempts_reached_agent, record.name


def test_attempt_log_shows_each_attempt_and_how_it_ended(deck_records: dict[str, RunRecord]) -> None:
    flip = deck_records["naive-flip"]
    log = flip.attempt_log
    assert [line.number for line in log] == list(range(1, flip.attempts + 1))
    # Killed in the pause, the agent's first attempt was cut off; the retries while it was down never
    # reached it; the first replay met the mismatch, the next one completed.
    assert log[0].reached_agent and log[0].outcome == "cut off" and log[0].retry_count == 0
    down = [line for line in log if not line.reached_agent]
    assert len(down) == flip.attempts_while_down and all(line.outcome == "agent down" for line in down)
    replays = [line for line in log[1:] if line.reached_agent]
    assert [line.outcome for line in replays] == ["RT0016", "completed"]
    # The server numbers each replay by the attempts that failed since the last progress.
    assert [line.retry_count for line in replays] == [replays[0].number - 1, replays[1].number - 1]
    clean = deck_records["clean"].attempt_log
    assert [(line.number, line.reached_agent, line.outcome) for line in clean] == [(1, True, "completed")]
