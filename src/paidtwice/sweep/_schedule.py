"""When a sweep's runs start: its clean runs, and the crash points planned from them.

Every clean run starts at once. A matrix (target, script) with a plan kept from the last sweep of the same
code (`_kept`) starts that plan's points beside its clean run. One with none (the first sweep of new code)
has its clean run's plan so far read while it runs, and starts each point two reads in a row planned the
same way, not the last one seen (what comes next may still change it) unless that is a durable pause; runs
parked in that pause are handed the points the clean run shows after it (`_point.Parked`). Each
such point's run goes to its moment, is killed and replayed, and then waits for the clean run to be measured
against it. When the clean run ends, a point started from a kept plan is the sweep's if the whole plan is
the clean run's, one started early if the plan has that very point in that place; the others are stopped
and thrown away (said in one line), and the plan's points no run stands for start then: at once if the
clean run's agent served its own service alone, else once every clean run has ended (the app's other
services, a handler's callees, are then served by the agents that stay up for the rest of the sweep; so
only a plan whose clean run served its own service alone is kept or read early). A point's record is
measured against the clean run and the point as the clean run planned it, so every sweep writes the records
a sweep planned after its clean runs writes. With a shard, no point starts before its clean run ended (the
shares are dealt over the points of all matrices). docs/how-to/sweep.md says it for users.
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

__all__ = ["Baseline", "Matrix", "ParkedRun", "PlanSoFar", "Schedule"]

Baseline = Callable[[], tuple[CleanRun, CrashPoint]]
"""What a point's run is measured against, once it settled: the clean run, and the point as it planned it."""


PlanSoFar = Callable[[list[CrashPoint]], bool]
"""Told the plan of a clean run still under way, as far as it went; True when it differs from the last one
told (the run is to be read again, whether or not it seems to have gone on)."""


class CleanOf(Protocol):
    def __call__(
        self, i: int, on_plan: PlanSoFar | None, /
    ) -> tuple[CleanRun, str, list[CrashPoint] | None, bool]:
        """The i-th matrix's clean run: its record, why its points are not swept ("" when they are), its
        plan (None when it has none), and whether its agent served the run's service alone (no other
        service of the app its points could call). While it runs, `on_plan` (if given) is told its plan so
        far, now and then, when its points may start before it ended."""
        ...


class ParkedRun(Protocol):
    """A run of a matrix held at a durable pause, not yet handed its point (`_point.Parked`)."""

    def close(self) -> None: ...


class PointOf(Protocol):
    """Runs a point of the i-th matrix (tagged `tag`, stopped by `stop`), measured against its clean run
    (or, when `baseline` is given, against what it returns once the run settled); with `parked`, its first
    run is that one, handed the point."""

    def __call__(
        self,
        i: int,
        point: CrashPoint,
        tag: str,
        stop: threading.Event,
        baseline: Baseline | None,
        parked: ParkedRun | None = None,
        /,
    ) -> PointResult: ...


ParkOf = Callable[[int, str], ParkedRun]
"""Starts a run of the i-th matrix tagged with the string, held at its first live durable pause."""

PARKED_MOST = 4
"""Runs parked at most in each durable pause of a clean run, one for each point it may show after it."""


@dataclass
class _Slot:
    """A run parked in a clean run's pause, waiting for a point after it (`Schedule._so_far`)."""

    pause: int
    """The pause's point's journal entries: which pause of the run it is held in."""
    stop: threading.Event = field(default_factory=threading.Event)
    """Stops its run, before or after it was handed its point."""
    woken: threading.Event = field(default_factory=threading.Event)
    """Set when it is handed its point, or stopped."""
    point: tuple[int, CrashPoint] | None = None
    """Its point, by its place in the plan so far, once handed."""
    run: Future[PointResult | None] | None = None
    """Its run: the point's result once handed, else None."""


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
    so_far: list[CrashPoint] = field(default_factory=list)
    """The clean run's plan as last read while it ran (no kept plan)."""
    early: dict[int, tuple[CrashPoint, threading.Event]] = field(default_factory=dict)
    """The points started while the clean run ran, by their place in its plan so far, each with the event
    that stops its run."""
    parked: list[_Slot] = field(default_factory=list)
    """The runs parked in its clean run's pauses, handed or not."""

    def started_early(self, n: int) -> bool:
        """The clean run's n-th point is the one a run started while it ran stands for."""
        if n not in self.early or self.plan is None or not self.alone or n >= len(self.plan):
            return False
        return same_plan([self.early[n][0]], [self.plan[n]])

    def started_ahead(self, n: int) -> bool:
        """The run started before the clean run ended in the n-th place of its plan (from the kept plan, or
        from the plan so far) is the sweep's."""
        return self.holds if self.kept is not None else self.started_early(n)


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
        park_of: ParkOf | None = None,
    ) -> None:
        self.lab = lab
        self.park_of = park_of
        self.matrices = matrices
        self.kills = kills
        self.stop = stop
        self.on_point = on_point
        self.lock = threading.Lock()
        self.futures: list[Future[Any]] = []
        self.running: set[Future[Any]] = set()
        """The futures of the points' pool (run, or waiting for a place)."""
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
                matrix = self.matrices[i]
                matrix.runs.append((point, self._submit(self.points, self._ahead, i, n, point, matrix.stop)))
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
            if pool is self.points:
                self.running.add(future)
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
        with self.lock:
            self.stop.set()
            for matrix in self.matrices:
                matrix.stop.set()
                for _, stop in matrix.early.values():
                    stop.set()
                for slot in matrix.parked:
                    slot.stop.set()
                    slot.woken.set()

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
        early = matrix.kept is None and self.kills.shard is None
        try:
            matrix.clean, matrix.not_swept, matrix.plan, matrix.alone = self.clean_of(
                i, (lambda so_far: self._so_far(i, so_far)) if early else None
            )
            if matrix.plan is not None:
                keep_plan(matrix.key, matrix.plan, alone=matrix.alone)
            matrix.holds = (
                matrix.kept is not None and matrix.plan is not None and same_plan(matrix.kept, matrix.plan)
            )
        finally:
            with self.lock:
                if not matrix.holds:
                    matrix.stop.set()
                for n, (_, stop) in matrix.early.items():
                    if not matrix.started_early(n):
                        stop.set()
                matrix.cleaned.set()
        if matrix.kept is not None and not matrix.holds and matrix.plan is not None:
            self.lab.echo(
                f"paidtwice: the plan kept for {matrix.name} ({len(matrix.kept)} points) is not its clean "
                f"run's ({len(matrix.plan)} points): the points started from it are thrown away, re-planned"
            )
        thrown = sum(1 for n in matrix.early if not matrix.started_early(n))
        if thrown and matrix.plan is not None:
            self.lab.echo(
                f"paidtwice: {thrown} of the {len(matrix.early)} points of {matrix.name} started while its "
                "clean run ran are not its plan's: thrown away, re-planned"
            )
        # A clean run that served its own service alone needs no other clean run's end: its points start
        # now (those no run started while it ran stands for). Every other waits for `after_cleans`.
        if matrix.alone and self.kills.shard is None and not self.stop.is_set():
            self._start_planned(i)
        with self.lock:
            for slot in matrix.parked:
                if slot.point is None:
                    slot.stop.set()  # no point of the plan came after its pause
                slot.woken.set()

    def _so_far(self, i: int, so_far: list[CrashPoint]) -> bool:
        """The i-th clean run's plan so far: start each point it planned the same way on the last read,
        except its last one unless that is a durable pause (planned from its start: what comes after it
        does not change it, and the pause is the longest wait of most runs). True when it is not the plan
        of the last read: the run is read again, whether or not it seems to have gone on."""
        matrix = self.matrices[i]
        before, matrix.so_far = matrix.so_far, so_far
        settled = so_far if so_far and so_far[-1].kind == "pause" else so_far[:-1]
        for n, point in enumerate(settled):
            if n in matrix.early or n >= len(before) or not same_plan([before[n]], [point]):
                continue
            stop = threading.Event()
            with self.lock:
                if self.stop.is_set():
                    return False
                if self._hand(matrix, so_far, n, point):
                    continue
                matrix.early[n] = (point, stop)
            run = self._submit(self.points, self._ahead, i, n, point, stop)
            matrix.runs.append((point, run))
        if so_far and so_far[-1].kind == "pause":
            self._park(i, so_far)
        return not same_plan(before, so_far)

    @staticmethod
    def _hand(matrix: Matrix, plan: list[CrashPoint], n: int, point: CrashPoint) -> bool:
        """Hand the n-th point of the plan (so far) to a run parked in the last pause before it and not handed
        one yet, if there is one: it takes the point, the pause's wait behind it already. Under the lock."""
        pauses = [p.journal_entries for p in plan[:n] if p.kind == "pause"]
        free = [s for s in matrix.parked if pauses and s.pause == pauses[-1] and s.point is None]
        slot = free[0] if free else None
        if slot is None or slot.run is None or slot.stop.is_set():
            return False
        slot.point = (n, point)
        matrix.early[n] = (point, slot.stop)
        matrix.runs.append((point, slot.run))
        slot.woken.set()
        return True

    def _park(self, i: int, so_far: list[CrashPoint]) -> None:
        """The i-th clean run is in a durable pause: park runs in it, one for each point it showed before it
        (at most `PARKED_MOST`), each to take a point it shows after it (`Agent.go_on`)."""
        matrix, pause = self.matrices[i], so_far[-1]
        if self.park_of is None:
            return
        if any(s.pause == pause.journal_entries for s in matrix.parked):
            return
        before = sum(1 for p in so_far if p.kind != "pause")
        with self.lock:
            # Only in places no run needs yet, nor this plan's points shown so far: parked runs come before
            # the other plans' points still to start (the points after a pause, which take longest).
            busy = sum(1 for f in self.running if not f.done())
            free = self.kills.parallel - busy - sum(1 for n in range(len(so_far)) if n not in matrix.early)
        for k in range(min(PARKED_MOST, before, free)):
            slot = _Slot(pause.journal_entries)
            with self.lock:
                if self.stop.is_set() or matrix.cleaned.is_set():
                    return
                matrix.parked.append(slot)
            # A hand-off comes later, in this thread (the clean run's): it finds the slot's run set.
            slot.run = self._submit(self.points, self._parked, i, slot, f"p{pause.journal_entries}_{k}")

    def _parked(self, i: int, slot: _Slot, tag: str) -> PointResult | None:
        """A run parked in a pause (`_park`): handed a point, that point's run; else stopped, None."""
        assert self.park_of is not None
        if slot.stop.is_set():
            return None
        try:
            parked = self.park_of(i, tag)
        except Exception:
            with self.lock:
                if slot.point is None:
                    slot.stop.set()  # handed nothing now: a point's own run says whatever failed
                    return None
            raise
        slot.woken.wait()
        if slot.point is None or slot.stop.is_set():
            parked.close()
            return None
        n, point = slot.point
        return self._ahead(i, n, point, slot.stop, parked)

    def _after_cleans(self) -> None:
        """Every clean run has ended: the points of each matrix whose kept plan did not hold (or that had
        none) and no run stands for yet, of the shard only with `kills.shard`, as planned by its clean
        run. Those of a clean run that served its own service alone have started already (`_clean`); the
        others start only now, as the app's other services are then served by the agents that stay up for
        the rest of the sweep."""
        if self.kills.shard is not None:
            jobs = [(i, p) for i, m in enumerate(self.matrices) if m.plan is not None for p in m.plan]
            for i, point in shard_of(jobs, self.kills.shard):
                self._start(i, point)
            return
        for i, matrix in enumerate(self.matrices):
            if not matrix.alone:
                self._start_planned(i)

    def _start_planned(self, i: int) -> None:
        """The i-th matrix's planned points that no run stands for yet: started."""
        matrix = self.matrices[i]
        if matrix.plan is None or matrix.holds:
            return
        for n, point in enumerate(matrix.plan):
            if matrix.started_early(n):
                continue
            with self.lock:
                handed = matrix.alone and self._hand(matrix, matrix.plan, n, point)
            if not handed:
                self._start(i, point)

    def _start(self, i: int, point: CrashPoint) -> None:
        matrix = self.matrices[i]
        # A thrown-away run of a point in the same place had the tag without the suffix.
        thrown = matrix.kept is not None or any(p.order == point.order for p, _ in matrix.early.values())
        again = "r" if thrown else ""
        matrix.runs.append((point, self._submit(self.points, self._planned, i, point, again)))

    def _planned(self, i: int, point: CrashPoint, again: str) -> PointResult:
        """A point planned from its matrix's clean run."""
        result = self.point_of(i, point, f"{point.order}{again}", self.stop, None)
        self._say(result)
        return result

    def _ahead(
        self, i: int, n: int, point: CrashPoint, stop: threading.Event, parked: ParkedRun | None = None
    ) -> PointResult | None:
        """A point started before its clean run ended (from the kept plan, or from the plan so far, or handed
        to a run parked in a pause before it), stopped by `stop`; None when the clean run's plan did not
        confirm it (the run is thrown away, whatever it measured or however it failed)."""
        matrix = self.matrices[i]
        try:
            baseline = lambda: self._baseline(i, n)  # noqa: E731
            result = self.point_of(i, point, str(point.order), stop, baseline, parked)
        except _Stale:
            return None
        except BaseException:
            matrix.cleaned.wait()
            if not matrix.started_ahead(n):
                return None
            raise
        self._say(result)
        return result

    def _baseline(self, i: int, n: int) -> tuple[CleanRun, CrashPoint]:
        """The clean run and its n-th point, once the clean run ended; `_Stale` if it planned otherwise."""
        matrix = self.matrices[i]
        matrix.cleaned.wait()
        if not matrix.started_ahead(n) or matrix.clean is None or matrix.plan is None:
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
