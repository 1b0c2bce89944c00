"""A curve: one run of a row per point (a restart delay, or a retry policy), each measured against what the
retry policy predicts for its measured down time."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paidtwice.deck._experiments import Curve
from paidtwice.deck._policy import DECK_POLICY, RetryPolicy, predict_paid_calls
from paidtwice.results import CurvePoint, CurveRecord, RunRecord

if TYPE_CHECKING:
    from paidtwice.deck._runner import Deck

__all__ = ["run_curve"]


def run_curve(deck: Deck, curve: Curve) -> CurveRecord:
    """Run the curve's base experiment once per point (a restart delay, or a retry policy),
    concurrently, and predict each point from the policy its agent ran under and its restart delay.

    The delay, not the measured down time: the replacement agent is held down until the retries due in the
    delay have found it down (`FaultedRun.refused`), so a busy server that makes them late lengthens the
    measured down time (reported beside) without giving its retries more time to land."""
    rows = curve.points()
    runs = deck.run_many(list(rows), concurrent=True)
    points = []
    for (row, _), run in zip(rows, runs, strict=True):
        policy = row.retry_policy
        if policy is not None and not isinstance(policy, RetryPolicy):
            raise ValueError(f"{curve.name}: a curve's points set their own retry policies")
        backoff = (policy or DECK_POLICY).backoff()
        prediction = predict_paid_calls(backoff, run.restart_delay)
        points.append(
            CurvePoint(
                delay=run.restart_delay,
                down_time=round(run.down_time or 0.0, 3),
                model_calls=run.model_calls,
                predicted_model_calls=prediction.paid_calls,
                predicted_range=prediction.range,
                attempts_while_down=run.attempts_while_down,
                status=run.status,
                invocation_id=run.invocation_id,
                usage=run.usage,
                cost_usd=run.cost_usd,
                extra_cost_usd=run.extra_cost_usd,
                max_attempts=policy.max_attempts if policy is not None else None,
                on_max_attempts=policy.on_max_attempts if policy is not None else "",
                outcome=_outcome(run),
            )
        )
    deck_ok = not curve.expected_model_calls or tuple(p.model_calls for p in points) == tuple(
        curve.expected_model_calls
    )
    # What the policy does once its attempts are spent is part of the claim: pause leaves the invocation
    # paused, kill ends it as failed.
    ended_ok = all(
        p.outcome == {"pause": "paused", "kill": "failed"}[p.on_max_attempts]
        for p in points
        if p.on_max_attempts
    )
    matches = deck_ok and ended_ok and all(p.agrees for p in points)
    return CurveRecord(
        curve.name, tuple(points), curve.expected_model_calls, matches, tuple(runs), varies=curve.varies
    )


def _outcome(run: RunRecord) -> str:
    """How a run's invocation ended: "paused", "succeeded", "failed", or its status if neither."""
    if run.status == "completed":
        return {"success": "succeeded", "failure": "failed"}.get(run.completion_result or "", "completed")
    return run.status
