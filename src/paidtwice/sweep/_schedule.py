"""When a sweep's runs start: its clean runs, and the crash points planned from them.

Every clean run starts at once. A matrix (target, script) with a plan kept from the last sweep of the same
code (`_kept`) starts that plan's points beside its clean run; each point's run goes to its moment, is
killed and replayed, and then waits for the clean run before it is measured against it. When the clean run
ends, its own plan is compared with the kept one: the same plan, and the points already under way are the
sweep's; another plan, and they are stopped and thrown away (the sweep says so in one line). The points of
a matrix whose kept plan did not hold, or that had none, start once every clean run has ended, as before
kept plans: the app's other services (a handler's callees) are then served by the agents that stay up for
the rest of the sweep, so only a plan whose clean run served its own service alone is kept. A point's
record is measured against the clean run and the point as the clean run planned it, so a sweep with a kept
plan writes the records a sweep planned after its clean runs writes. With a shard, no kept plan is used
(the shares are dealt over the points of all matrices).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from paidtwice.lab import Lab
from paidtwice.results import CleanRun, CrashPoint, PointResult
from paidtwice.sweep._kept import keep_plan, same_plan
from paidtwice.sweep._options import KillPlan, shard_of

__all__ = ["Baseline", "Matrix", "Schedule"]

Baseline = Callable[[], tuple[CleanRun, CrashPoint]]
"""What a point's run is measured against, once it settled: the clean run, and the point as it planned it."""


class CleanOf(Protocol):
    def __call__(self, i: int, /) -> tuple[CleanRun, str, list[CrashPoint] | None, bool]:
        """The i-th matrix's clean run: its record, why its points are not swept ("" when they are), its
        plan (None when it has none), and whether its agent served the run's service alone (no other
        service of the app its points could call)."""
        ...


class PointOf(Protocol):
    """Runs a point of the i-th matrix (tagged `tag`, stopped by `stop`), measured against its clean run
    (or, when `baseline` is given, against what it returns once the run settled)."""

    def __call__(
        self, i: int, point: CrashPoint, tag: str, stop: threading.Event, baseline: Baseline | None, /
    ) -> PointResult: ...


class _Stale(Exception):
    """The plan a point was started from is not its clean run's: the point's run is thrown away."""


@dataclass
class Matrix:
    """One (target, script) of the sweep, as its runs go."""

    name: str
    """Who it is in words (MODE/SCRIPT), for the line that says its kept plan was thrown away."""
    key: str | None
    """Its plan's key (`_kept.plan_key`); None: no plan is kept for it."""
    kept: list[CrashPoint] | None
    """The plan kept from the last sweep of the same code; None: there is none (or it is not used)."""
    took: dict[int, float] = field(default_factory=dict)
    """How long each kept point's run took the last time (seconds, by order; `_kept.kept_durations`)."""
    stop: threading.Event = field(default_factory=threading.Event)
    """Stops the points started from the kept plan."""
    cleaned: threading.Event = field(default_factory=threading.Event)
    """Set once the clean run ended (or failed)."""
    clean: CleanRun | None = None
    """The clean run's record."""
    not_swept: str = ""
    """Why its points are not swept (a wait nothing resolves)."""
    plan: list[CrashPoint] | None = None
    """The clean run's plan; None until it ended, and when it could not plan."""
    holds: bool = False
    """The kept plan is the clean run's plan: the points started from it are the sweep's."""
    alone: bool = False
    """The clean run's agent served the run's service alone (no other service of the app)."""
    runs: list[tuple[CrashPoint, Future[PointResult | None]]] = field(default_factory=list)
    """Each point started, and its run."""


class Schedule:
    """Runs a sweep's clean runs and points, `kills.parallel` at a time; the first failure stops the rest."""

    def __init__(
        self,
        lab: Lab,
        matrices: Sequence[Matrix],
        *,
        kills: KillPlan,
        stop: threading.Event,
        on_point: Callable[[PointResult], None] | None,
    ) -> None:
        self.lab = lab
        self.matrices = matrices
        self.kills = kills
        self.stop = stop
        self.on_point = on_point
        self.lock = threading.Lock()
        self.futures: list[Future[Any]] = []
        self.failure: BaseException | None = None
        # The clean runs have places of their own: a point never takes a clean run's place, and a point
        # waiting for its clean run never waits for one that has no place.
        self.cleans = ThreadPoolExecutor(max_workers=max(1, min(kills.parallel, len(matrices))))
        self.points = ThreadPoolExecutor(max_workers=max(1, kills.parallel))

    def run(
        self, clean_of: CleanOf, point_of: PointOf, *, after_cleans: Callable[[], None] = lambda: None
    ) -> list[tuple[PointResult, ...]]:
        """Every matrix's points, measured, in the order of its clean run's plan. `after_cleans` is called
        once every clean run has ended, before any point planned from them starts."""
        self.clean_of, self.point_of = clean_of, point_of
        try:
            cleans = [self._submit(self.cleans, self._clean, i) for i in range(len(self.matrices))]
            for i, n, point in self._longest_first():
                self.matrices[i].runs.append((point, self._submit(self.points, self._ahead, i, n, point)))
            for future in cleans:
                future.exception()  # waits; a failure is kept by `_ended`
            if self.failure is None:
                after_cleans()
                self._after_cleans()
            self._drain()
        except BaseException:
            self._stop_all()  # Ctrl-C while waiting: the runs stop waiting, their agents are killed
            raise
        finally:
            self.cleans.shutdown(wait=True)
            self.points.shutdown(wait=True)
        if self.failure is not None:
            raise self.failure
        swept = [self._points_of(matrix) for matrix in self.matrices]
        for matrix, points in zip(self.matrices, swept, strict=True):
            if matrix.plan is not None:
                took = {p.order: p.wall_time for p in points}
                keep_plan(matrix.key, matrix.plan, took, alone=matrix.alone)
        return swept

    def _longest_first(self) -> list[tuple[int, int, CrashPoint]]:
        """Every kept plan's points (matrix, position, point), the longest last time first (those not
        measured then before them): with more points than places, the long ones do not wait for a place
        and end last."""
        ahead = [(i, n, p) for i, m in enumerate(self.matrices) for n, p in enumerate(m.kept or ())]
        return sorted(ahead, key=lambda job: -self.matrices[job[0]].took.get(job[2].order, float("inf")))

    def _submit(self, pool: ThreadPoolExecutor, work: Callable[..., Any], *args: Any) -> Future[Any]:
        with self.lock:
            future = pool.submit(work, *args)
            self.futures.append(future)
        future.add_done_callback(self._ended)
        return future

    def _ended(self, future: Future[Any]) -> None:
        """The first failure stops every other run (their agents are killed on the way out)."""
        error = future.exception()
        if error is None:
            return
        with self.lock:
            if self.failure is None:
                self.failure = error
        self._stop_all()

    def _stop_all(self) -> None:
        self.stop.set()
        for matrix in self.matrices:
            matrix.stop.set()

    def _drain(self) -> None:
        """Wait until every run submitted (also those submitted meanwhile) has ended."""
        while True:
            with self.lock:
                pending = [f for f in self.futures if not f.done()]
            if not pending:
                return
            for future in pending:
                future.exception()  # waits; a failure is kept by `_ended`

    def _clean(self, i: int) -> None:
        matrix = self.matrices[i]
        try:
            matrix.clean, matrix.not_swept, matrix.plan, matrix.alone = self.clean_of(i)
            if matrix.plan is not None:
                keep_plan(matrix.key, matrix.plan, alone=matrix.alone)
            matrix.holds = (
                matrix.kept is not None and matrix.plan is not None and same_plan(matrix.kept, matrix.plan)
            )
        finally:
            if not matrix.holds:
                matrix.stop.set()
            matrix.cleaned.set()
        if matrix.kept is not None and not matrix.holds and matrix.plan is not None:
            self.lab.echo(
                f"paidtwice: the plan kept for {matrix.name} ({len(matrix.kept)} points) is not its clean "
                f"run's ({len(matrix.plan)} points): the points started from it are thrown away, re-planned"
            )

    def _after_cleans(self) -> None:
        """Every clean run has ended: the points of each matrix whose kept plan did not hold (or that had
        none), of the shard only with `kills.shard`, as planned by its clean run. They start only now, as
        the app's other services are then served by the agents that stay up for the rest of the sweep."""
        jobs = [
            (i, p) for i, m in enumerate(self.matrices) if m.plan is not None and not m.holds for p in m.plan
        ]
        if self.kills.shard is not None:
            jobs = shard_of(jobs, self.kills.shard)
        for i, point in jobs:
            again = "r" if self.matrices[i].kept is not None else ""
            self.matrices[i].runs.append((point, self._submit(self.points, self._planned, i, point, again)))

    def _planned(self, i: int, point: CrashPoint, again: str) -> PointResult:
        """A point planned from its matrix's clean run."""
        result = self.point_of(i, point, f"{point.order}{again}", self.stop, None)
        self._say(result)
        return result

    def _ahead(self, i: int, n: int, point: CrashPoint) -> PointResult | None:
        """A point of the kept plan, started beside the clean run; None when the plan was not the clean
        run's (the run is thrown away, whatever it measured or however it failed)."""
        matrix = self.matrices[i]
        try:
            result = self.point_of(i, point, str(point.order), matrix.stop, lambda: self._baseline(i, n))
        except _Stale:
            return None
        except BaseException:
            matrix.cleaned.wait()
            if not matrix.holds:
                return None
            raise
        self._say(result)
        return result

    def _baseline(self, i: int, n: int) -> tuple[CleanRun, CrashPoint]:
        """The clean run and its n-th point, once the clean run ended; `_Stale` if it planned otherwise."""
        matrix = self.matrices[i]
        matrix.cleaned.wait()
        if not matrix.holds or matrix.clean is None or matrix.plan is None:
            raise _Stale
        return matrix.clean, matrix.plan[n]

    def _say(self, result: PointResult) -> None:
        if self.on_point is not None:
            with self.lock:
                self.on_point(result)

    def _points_of(self, matrix: Matrix) -> tuple[PointResult, ...]:
        """The matrix's measured points, in its plan's order (a thrown-away run has no result)."""
        measured = [(p.order, f.result()) for p, f in matrix.runs if f.done() and not f.exception()]
        return tuple(r for _, r in sorted(measured, key=lambda x: x[0]) if r is not None)
