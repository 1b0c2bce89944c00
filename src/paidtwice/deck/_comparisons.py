"""A comparison: runs of two rows (and any set beside them) at once, under the same load, side by side."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from paidtwice.deck._experiments import DEFAULT_POLICY_RUN, Comparison, Experiment
from paidtwice.deck._measures import recovery_check
from paidtwice.deck._policy import (
    Backoff,
    RetryPolicy,
    ServerDefaultPolicy,
    predict_paid_calls,
    server_default_policy,
)
from paidtwice.engine import RestateServer
from paidtwice.lab import DEFAULT_RESTART_DELAY
from paidtwice.results import Check, ComparisonRecord, RunRecord

if TYPE_CHECKING:
    from paidtwice.deck._runner import Deck
    from paidtwice.lab import Lab

__all__ = ["explicit_recovery_check", "mismatch_behaviour_check", "run_comparison"]


def run_comparison(deck: Deck, row: Comparison) -> ComparisonRecord:
    """Run both sides of a comparison (and any runs it sets beside them) at once, the same load on all,
    and set them side by side."""
    runs = deck.run_many([(run, None) for run in row.runs()], concurrent=True)
    first, second = runs[0], runs[1]
    regain_difference = None
    difference: float | None
    if row.figure == "server default":
        difference = float(first.model_calls - second.model_calls)
        check, *more = server_default_checks(deck.lab, row, first, second)
        runs_checks: tuple[Check, ...] = tuple(more)
    elif row.figure == "mismatch behaviour":
        difference = float(first.model_calls - second.model_calls)
        check = mismatch_behaviour_check(row, runs)
        # Runs that retry to their policy's end are judged by the check's relation, not their exact counts.
        judged = [r for r, e in zip(runs, row.runs(), strict=True) if e.expected.attempts is None]
    elif row.figure == "explicit recovery":
        difference = float(second.booking_effects - runs[-1].booking_effects)
        check = explicit_recovery_check(row, runs)
    elif row.figure == "recovery":
        difference = _difference(_replay_s(first), _replay_s(second))
        a, b = first.recovery_breakdown, second.recovery_breakdown
        if a is not None and b is not None:
            regain_difference = _difference(a.regain_s, b.regain_s)
        # Judged on the time to regain what the kill lost, not on the time to completion: after that
        # point both agents do the same work, except that the journaled one waits for the journal to
        # take its last answer, which the naive one does not (see `RecoveryBreakdown`).
        check = recovery_check(first, second, row.first.model_latency)
    else:
        difference = float(first.booking_effects - second.booking_effects)
        check = Check(
            "booking effects, key none vs stable key",
            f"{row.first.expected.booking_effects} vs {row.second.expected.booking_effects}",
            f"{first.booking_effects} ({first.idempotency_key}) vs "
            f"{second.booking_effects} ({second.idempotency_key})",
            (first.booking_effects, second.booking_effects)
            == (row.first.expected.booking_effects, row.second.expected.booking_effects),
        )
    if row.figure != "server default":
        runs_checks = ()
    if row.figure != "mismatch behaviour":
        judged = list(runs)
    checks = (check, *runs_checks, *(c for run in judged for c in run.checks))
    return ComparisonRecord(
        name=row.name,
        figure=row.figure,
        deck_says=row.deck_says,
        runs=tuple(runs),
        difference=difference,
        recovery_difference_s=_difference(first.recovery_s, second.recovery_s),
        regain_difference_s=regain_difference,
        checks=checks,
        matches=check.ok and all(c.ok for c in runs_checks) and all(run.matches for run in judged),
    )


def explicit_recovery_check(row: Comparison, runs: Sequence[RunRecord]) -> Check:
    """The explicit-recovery claim: the changed run meets no mismatch and completes; the booking is made
    again without a key, once with a stable one (each run's own figures are judged in its checks)."""
    changed, *bookings = runs
    want = ", ".join(
        [f"{row.first.expected.status}, 0 RT0016"]
        + [f"{r.booking_key}: {r.expected.booking_effects}" for r in row.runs()[1:]]
    )
    got = ", ".join(
        [f"{changed.status}, {changed.mismatches} RT0016"]
        + [f"{r.idempotency_key}: {r.booking_effects}" for r in bookings]
    )
    ok = (
        changed.status == row.first.expected.status
        and changed.mismatches == 0
        and all(
            r.booking_effects == e.expected.booking_effects
            for r, e in zip(bookings, row.runs()[1:], strict=True)
        )
    )
    return Check("mismatches, then booking effects by key", want, got, ok)


def _server_default(lab: Lab, flags: tuple[tuple[str, str], ...]) -> ServerDefaultPolicy:
    """The default retry policy a server of the lab's version runs with under `flags`, as it prints it."""
    server = RestateServer(version=lab.server_version, extra_env=dict(flags), echo=lab.echo)
    try:
        return server_default_policy(server.config(), version=lab.server_version)
    finally:
        server.stop()


def _predicted(policy: ServerDefaultPolicy | RetryPolicy, down_time: float) -> tuple[int, int]:
    backoff = (
        policy.backoff
        if isinstance(policy, ServerDefaultPolicy)
        else Backoff(
            policy.initial_interval, policy.exponentiation_factor, policy.max_interval, policy.max_attempts
        )
    )
    return predict_paid_calls(backoff, down_time).range


def _calls(low_high: tuple[int, int]) -> str:
    low, high = low_high
    return str(low) if low == high else f"{low} to {high}"


def server_default_checks(lab: Lab, row: Comparison, first: RunRecord, second: RunRecord) -> list[Check]:
    """The server-default claim: the run without a policy of its own pays what its server's default (read
    from that server) predicts, as the run that sets the same policy on its service does; and what the
    pinned server's own default predicts at the deck's restart delay, with the policy it read."""
    short = _server_default(lab, row.first.server_flags)
    own = row.second.retry_policy
    assert isinstance(own, RetryPolicy)
    # From each run's restart delay: its agent is held down for the retries due in it, however late (as for
    # a curve's points, `run_curve`).
    want = (_predicted(short, first.restart_delay), _predicted(own, second.restart_delay))
    got = (first.model_calls, second.model_calls)
    ran = Check(
        f"paid calls, the server's default ({short.describe()}) vs the same policy on the service",
        f"{_calls(want[0])} vs {_calls(want[1])} (predicted from each policy and restart delay)",
        f"{got[0]} vs {got[1]}",
        all(low <= calls <= high for (low, high), calls in zip(want, got, strict=True))
        and short.describe().startswith(f"{own.max_attempts} attempts then {own.on_max_attempts}"),
    )
    pinned = _server_default(lab, ())
    low, high = _predicted(pinned, DEFAULT_RESTART_DELAY)
    nominal = pinned.backoff.total_wait()
    expected = DEFAULT_POLICY_RUN.expected
    predicted = Check(
        f"the pinned server's own default ({pinned.describe()}, read by {pinned.read_from}), "
        f"a {DEFAULT_RESTART_DELAY:g} s restart: predicted",
        f"{expected.status}, {expected.model_calls} paid calls",
        f"{pinned.on_max_attempts}d, {_calls((low, high))} paid calls, the pause {nominal / 60:.0f} to "
        f"{nominal * 1.3 / 60:.0f} min after the first failure",
        (low, high) == (expected.model_calls, expected.model_calls)
        and f"{pinned.on_max_attempts}d" == expected.status,
    )
    return [ran, predicted]


def mismatch_behaviour_check(row: Comparison, runs: Sequence[RunRecord]) -> Check:
    """The claim of a row that sets one agent's behaviours on a journal mismatch side by side: each run's
    status and paid calls (with its RT0016s), and a paused run offered a resume by `recover`."""

    def claim(e: Experiment) -> str:
        if e.expected.attempts is not None:
            return (
                f"{e.expected.status} after {e.expected.attempts} attempts, 1 + RT0016 paid (a call a retry)"
            )
        return f"{e.expected.status}, {e.expected.model_calls} paid, {e.expected.mismatches} RT0016"

    def holds(r: RunRecord, e: Experiment) -> bool:
        if e.expected.attempts is not None:
            return (r.status, r.attempts) == (e.expected.status, e.expected.attempts) and (
                r.model_calls == 1 + r.mismatches == r.attempts - r.attempts_while_down
            )
        return (r.status, r.model_calls, r.mismatches) == (
            e.expected.status,
            e.expected.model_calls,
            e.expected.mismatches,
        )

    want = "; ".join(claim(e) for e in row.runs())
    got = "; ".join(
        f"{r.status} after {r.attempts} attempts ({r.attempts_while_down} down), {r.model_calls} paid, "
        f"{r.mismatches} RT0016"
        for r in runs
    )
    ok = all(holds(r, e) for r, e in zip(runs, row.runs(), strict=True)) and all(
        any(way.startswith("resume:") for way in r.recover_offers)
        for r, e in zip(runs, row.runs(), strict=True)
        if e.plans_recovery and r.status == "paused"
    )
    return Check("status, paid calls and RT0016 of each run", want, got, ok)


def _replay_s(run: RunRecord) -> float | None:
    """Seconds of a run's recovery from the first attempt that reached the restarted agent: the wait before
    it is the server's retry timer, whose jitter is no part of what either agent does."""
    if run.recovery_s is None or run.retry_wait_s is None:
        return None
    return run.recovery_s - run.retry_wait_s


def _difference(a: float | None, b: float | None) -> float | None:
    return round(a - b, 3) if a is not None and b is not None else None
