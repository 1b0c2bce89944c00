"""A kill that comes late still lands in its moment: the moment is held open until the kill, so no figure
depends on how fast the lab (or the machine) gets there.

Each row here is a deck row whose fault waits longer than its moment would last on its own: past the end of
the 2 s durable pause (the deck agent's, held by its host; the TypeScript agent's, held by the proxy in front
of its command), past the stub's 3 s hold of a model call and its 3 s booking, and an operator's pause sent
past the stub's 3 s hold of a model call's answer. The counts must be the deck's all the same.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from paidtwice.deck import COMPARISONS, EXPERIMENTS, Deck, FaultedRun, Landing
from paidtwice.deck._faults import KillInPause, KillMidBooking, KillMidCall, PauseMidCall
from paidtwice.lab import Lab

LATE = 3.5
"""Seconds the late faults add: longer than the deck agent's pause (2 s) and the stub's holds (3 s)."""


@dataclass(frozen=True)
class LateKillInPause(KillInPause):
    """A kill in the pause from a lab that gets there only after the pause would have ended."""

    def land(self, run: FaultedRun) -> Landing:
        run.wait_for_pause()
        run.sleep(LATE)
        return super().land(run)


def test_kills_that_come_after_their_moment_would_have_ended_still_land_in_it(lab: Lab) -> None:
    naive = next(row for row in EXPERIMENTS if row.name == "naive-kill-in-pause")
    mid_call = next(row for row in EXPERIMENTS if row.name == "journaled-kill-mid-call")
    booking = next(c for c in COMPARISONS if c.name == "idempotent-tool-kill-mid-call").first
    ts_pause = next(c for c in COMPARISONS if c.name == "ts-changed-pause-on-mismatch").second
    operator = next(row for row in EXPERIMENTS if row.name == "operator-pause-mid-call")
    assert mid_call.hold is not None and booking.booking_seconds < LATE
    assert operator.hold is not None and operator.hold.seconds < LATE
    rows = [
        replace(naive, name="late-kill-in-pause", fault=LateKillInPause()),
        replace(
            mid_call, name="late-kill-mid-call", fault=KillMidCall(call=1, after=mid_call.hold.seconds + 0.5)
        ),
        replace(booking, name="late-kill-mid-booking", fault=KillMidBooking(call=1, after=LATE)),
        replace(ts_pause, name="late-ts-kill-in-pause", fault=LateKillInPause()),
        replace(operator, name="late-operator-pause-mid-call", fault=PauseMidCall(call=1, after=LATE)),
    ]
    runs = Deck(lab).run_many([(row, None) for row in rows], concurrent=True)
    late_pause, late_call, late_booking, late_ts, late_operator = runs

    # Killed in the pause: the naive agent asks its first question again on the replay, nothing more.
    assert late_pause.killed_at is not None and late_pause.down_time is not None
    assert (late_pause.status, late_pause.model_calls, late_pause.tool_calls) == ("completed", 3, 1)
    assert late_pause.matches, [c for c in late_pause.checks if not c.ok]
    # Killed in the held call: its answer was never delivered, and the replay asked again.
    assert late_call.model_log[0].delivered is False
    assert (late_call.model_calls, late_call.tool_calls) == (3, 1)
    assert late_call.matches, [c for c in late_call.checks if not c.ok]
    # Killed in the held booking: the step ran again without a key, so the booking was made twice.
    assert late_booking.booking_effects == 2
    assert late_booking.matches, [c for c in late_booking.checks if not c.ok]
    # The TypeScript agent behind the proxy, killed in its pause: its replay meets RT0016 and pauses at once.
    assert late_ts.killed_at is not None
    assert (late_ts.status, late_ts.model_calls, late_ts.mismatches) == ("paused", 2, 1)
    assert late_ts.matches, [c for c in late_ts.checks if not c.ok]
    # The operator's pause, sent after the stub's hold would have ended: the answer waited for it, and the
    # step in flight was still finished and journaled before the pause, so the call was paid once.
    assert late_operator.model_log[0].delivered is True
    assert (late_operator.status, late_operator.model_calls) == ("completed", 2)
    assert late_operator.matches, [c for c in late_operator.checks if not c.ok]
