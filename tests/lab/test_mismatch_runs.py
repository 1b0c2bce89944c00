"""The mismatch runs on the real server, the retry bill, and the restart-delay curve."""

from __future__ import annotations

from paidtwice.agent import weather
from paidtwice.deck import CURVES, Backoff, Deck, predict_paid_calls
from paidtwice.lab import Lab
from paidtwice.results import CurvePoint, RunRecord


def test_naive_flip_mismatches_once_then_completes(deck_records: dict[str, RunRecord]) -> None:
    record = deck_records["naive-flip"]
    assert record.status == "completed"
    assert (record.model_calls, record.tool_calls) == (4, 1)
    assert record.mismatches == 1
    assert record.mismatch is not None
    assert record.mismatch.index == 1
    assert record.mismatch.recorded == "run weather"


def test_changed_for_good_pauses_after_the_policy_runs_out(
    deck_records: dict[str, RunRecord],
) -> None:
    record = deck_records["naive-changed-for-good"]
    assert record.status == "paused"
    assert record.tool_calls == 1
    assert record.attempts == weather.RETRY_POLICY.max_attempts == 20
    assert record.model_calls == 1 + record.attempts_reached_agent
    assert record.attempts == 1 + record.attempts_reached_agent + record.attempts_while_down
    assert record.mismatches == record.attempts_reached_agent
    assert record.model_calls == 18


def test_prediction_is_exact_only_between_jitter_windows() -> None:
    backoff = Backoff.from_policy(weather.RETRY_POLICY)
    assert backoff.intervals()[:6] == [0.2, 0.4, 0.8, 1.6, 2.0, 2.0]
    assert predict_paid_calls(backoff, 1.25).paid_calls == 18
    # 0.7 s: the second retry (0.6 to 0.78 s after the kill) may land before or after the agent is back.
    assert predict_paid_calls(backoff, 0.7).paid_calls is None
    assert predict_paid_calls(backoff, 0.7).range == (18, 19)


def test_restart_delay_curve_matches_its_prediction_at_every_point(lab: Lab) -> None:
    curve = Deck(lab).run_curve(CURVES[0])
    assert len(curve.points) >= 5
    for point in curve.points:
        assert point.status == "paused"
        # Exact where the prediction is; where the measured down time falls in a jitter window, the
        # measurement must still lie in the range the policy allows.
        assert point.agrees, point
        if point.predicted_model_calls is not None:
            assert point.model_calls == point.predicted_model_calls, point
    calls = [point.model_calls for point in curve.points]
    assert calls == sorted(calls, reverse=True) and calls[0] > calls[-1]


def test_a_point_agrees_only_inside_its_predicted_range() -> None:
    backoff = Backoff.from_policy(weather.RETRY_POLICY)
    ambiguous = predict_paid_calls(backoff, 0.7)

    def point(model_calls: int) -> CurvePoint:
        return CurvePoint(
            delay=0.5,
            down_time=0.7,
            model_calls=model_calls,
            predicted_model_calls=ambiguous.paid_calls,
            predicted_range=ambiguous.range,
            attempts_while_down=0,
            status="paused",
            invocation_id="inv",
        )

    low, high = ambiguous.range
    assert [point(n).agrees for n in (low - 1, low, high, high + 1)] == [False, True, True, False]
