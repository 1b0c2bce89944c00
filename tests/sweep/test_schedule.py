"""When a sweep's points start (`paidtwice.sweep._schedule`), with no plan kept: as the clean run shows them.

Pure logic: the clean run and the points' runs are functions standing in for the real ones, which
tests/sweep/test_kept_plan.py runs on a real server. A point is started once two reads of the clean run's
plan so far agree on it and something came after it (or it is a durable pause); when the clean run ends, a
point started so that its plan has otherwise is thrown away and run again as planned. While the clean run
is in a durable pause, runs are parked in it (one for each point before it, where no point has a gate), and
the points it shows after the pause are handed to them.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any, cast

from paidtwice.lab import Lab
from paidtwice.results import CleanRun, CrashPoint, PointResult
from paidtwice.sweep._options import KillPlan
from paidtwice.sweep._schedule import Baseline, Matrix, ParkedRun, PlanSoFar, Schedule

_CLEAN = CleanRun(
    status="completed", answer="ok", model_calls=1, step_runs=(), journal=(), invocation_id="inv",
    journaled_model_calls=0,
)  # fmt: skip


def _point(order: int, *, gate: str | None = None, kind: str = "after-entry") -> CrashPoint:
    return CrashPoint(name=f"point {order}", order=order, kind=kind, journal_entries=order, gate=gate)  # type: ignore[arg-type]


class _Parked:
    """A run parked in a pause (`_point.Parked`): its tag, and whether it was closed unhanded."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.closed = False

    def close(self) -> None:
        self.closed = True


class _Runs:
    """The stand-ins: a clean run that reports its plan so far in `reads` and ends with `plan`; point runs
    that record their tag, whether they started early, and what they were measured against."""

    def __init__(self, reads: list[list[CrashPoint]], plan: list[CrashPoint], *, alone: bool = True) -> None:
        self.reads, self.plan, self.alone = reads, plan, alone
        self.started: list[tuple[str, bool]] = []
        self.lock = threading.Lock()
        self.said: list[str] = []
        self.parked: list[_Parked] = []
        self.handed: list[tuple[str, str]] = []
        """(the point's tag, the tag of the parked run it was handed to)."""

    def park(self, i: int, tag: str) -> ParkedRun:
        parked = _Parked(tag)
        with self.lock:
            self.parked.append(parked)
        return parked

    def clean(self, i: int, on_plan: PlanSoFar | None) -> tuple[CleanRun, str, list[CrashPoint] | None, bool]:
        for read in self.reads:
            if on_plan is not None:
                on_plan(read)
        return _CLEAN, "", self.plan, self.alone

    def point(
        self,
        i: int,
        point: CrashPoint,
        tag: str,
        stop: threading.Event,
        baseline: Baseline | None,
        parked: ParkedRun | None = None,
    ) -> PointResult:
        with self.lock:
            self.started.append((tag, baseline is not None))
            if parked is not None:
                self.handed.append((tag, cast(_Parked, parked).tag))
        measured = baseline()[1] if baseline is not None else point  # raises when the plan had it otherwise
        return cast(
            PointResult, SimpleNamespace(order=measured.order, tag=tag, gate=measured.gate, wall_time=0.0)
        )

    def sweep(self, kills: KillPlan = KillPlan(parallel=8)) -> list[Any]:
        lab = cast(Lab, SimpleNamespace(echo=self.said.append))
        matrix = Matrix(name="journaled/steady", key=None, kept=None)
        schedule = Schedule(
            lab, [matrix], kills=kills, stop=threading.Event(), on_point=None, park_of=self.park
        )
        (points,) = schedule.run(self.clean, self.point)
        return list(points)


def test_points_start_as_the_clean_run_shows_them_and_one_it_planned_otherwise_runs_again() -> None:
    plan = [_point(1), _point(2, gate="op:2"), _point(3), _point(4)]
    moved = _point(2, gate="op:7")  # what the plan so far said of point 2 before the run went on
    runs = _Runs([[plan[0], moved], [plan[0], moved, plan[2]], [plan[0], moved, plan[2], plan[3]]], plan)
    points = runs.sweep()
    # Point 1 and the moved point 2 on the second read (seen twice, not last), point 3 on the third; point 4
    # was last on every read: it starts once the clean run ended, with point 2 as planned.
    assert sorted(runs.started) == sorted(
        [("1", True), ("2", True), ("3", True), ("2r", False), ("4", False)]
    )
    assert [(p.order, p.tag, p.gate) for p in points] == [
        (1, "1", None), (2, "2r", "op:2"), (3, "3", None), (4, "4", None),
    ]  # fmt: skip
    assert runs.said == [
        "paidtwice: 1 of the 3 points of journaled/steady started while its clean run ran are not its "
        "plan's: thrown away, re-planned"
    ]


def test_a_durable_pause_starts_while_the_clean_run_is_in_it() -> None:
    plan = [_point(1), _point(2, kind="pause"), _point(3)]
    runs = _Runs([plan[:2], plan[:2]], plan)
    points = runs.sweep()
    # Point 3, shown only as the clean run ended, went to the run parked in the pause.
    assert sorted(runs.started) == [("1", True), ("2", True), ("3", True)]
    assert runs.handed == [("3", "p2_0")]
    assert [p.order for p in points] == [1, 2, 3] and runs.said == []


def test_no_point_starts_early_for_a_shard_or_an_agent_that_serves_other_services() -> None:
    plan = [_point(1), _point(2), _point(3)]
    sharded = _Runs([plan, plan], plan)
    assert [p.order for p in sharded.sweep(KillPlan(parallel=8, shard=(1, 1)))] == [1, 2, 3]
    assert sorted(sharded.started) == [("1", False), ("2", False), ("3", False)]
    # Read early all the same (the sweep does not when its agent serves other services): thrown away.
    others = _Runs([plan, plan], plan, alone=False)
    assert [p.order for p in others.sweep()] == [1, 2, 3]
    # The last point seen was never started early: its run is the first in its place.
    assert sorted(t for t, early in others.started if not early) == ["1r", "2r", "3"]


def test_the_points_after_a_pause_are_handed_to_runs_parked_in_it() -> None:
    plan = [_point(1), _point(2), _point(3, kind="pause"), _point(4), _point(5), _point(6)]
    runs = _Runs([plan[:3], plan[:3]], plan)
    points = runs.sweep()
    # Seen in the pause, two runs were parked (one for each point before it); the clean run showed points 4
    # to 6 only as it ended: the first two went to the parked runs, the third to a run of its own.
    assert sorted(p.tag for p in runs.parked) == ["p3_0", "p3_1"]
    assert sorted(t for t, _ in runs.handed) == ["4", "5"]
    assert sorted(p for _, p in runs.handed) == ["p3_0", "p3_1"]
    assert ("6", False) in runs.started and not any(p.closed for p in runs.parked)
    assert [p.order for p in points] == [1, 2, 3, 4, 5, 6] and runs.said == []


def test_a_parked_run_no_point_came_for_is_closed() -> None:
    plan = [_point(1), _point(2), _point(3, kind="pause")]
    runs = _Runs([plan, plan], plan)
    points = runs.sweep()
    assert len(runs.parked) == 2 and all(p.closed for p in runs.parked) and runs.handed == []
    assert [p.order for p in points] == [1, 2, 3] and runs.said == []


def test_no_run_is_parked_in_a_place_a_point_will_need() -> None:
    # Two places, and the three points the clean run showed up to its pause will take them: none is parked.
    plan = [_point(1), _point(2), _point(3, kind="pause"), _point(4)]
    runs = _Runs([plan[:3], plan[:3]], plan)
    assert [p.order for p in runs.sweep(KillPlan(parallel=2))] == [1, 2, 3, 4]
    assert runs.parked == [] and runs.handed == []
