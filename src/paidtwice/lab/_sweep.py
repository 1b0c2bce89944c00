"""The sweep: "if the agent dies right now, what survives?", measured at every moment a crash can land.

A clean run of the agent gives its timeline: the host's step log (every model request, context operation and
step execution, in order) beside the journal. From it come the distinct crash points: after each journal
entry (before the agent's next action), in flight inside each model call and each step, and in each durable
pause. Each point is a run of its own, concurrently on one server and one stub: the agent is stopped at the
moment (a host gate, a held stub call, or the pause), the lab confirms from the journal and the ledgers
that it is there, SIGKILLs it, restarts it after the restart delay, waits until the invocation completes
or pauses, and counts what the replay paid again against the clean run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paidtwice._exceptions import ExperimentError, UsageError
from paidtwice.agent._process import AgentAttempt, AgentHost
from paidtwice.agent._wire import MISMATCH_ERROR_CODE
from paidtwice.engine._sql import JournalEntry
from paidtwice.lab._experiments import DEFAULT_RESTART_DELAY
from paidtwice.lab._records import to_jsonable
from paidtwice.lab._runner import (
    DECK_AGENT,
    QUESTION,
    Lab,
    LabCancelled,
    _epoch,
    _settled,
    _Watcher,
    mismatches_of,
)
from paidtwice.stub._scripts import Hold, Script, script_by_name
from paidtwice.stub._server import Lane
from paidtwice.stub._turns import VARIATIONS, load_script_file

__all__ = [
    "CrashPoint",
    "PointResult",
    "SweepMatrix",
    "SweepTarget",
    "deck_target",
    "derive_points",
    "check_app",
    "sweep",
    "sweep_targets",
    "write_sweep",
]

_HOLD_SECONDS = 60.0
"""A held call stays open this long; the kill ends it much sooner (the stub sees the caller leave)."""
_MOMENT_TIMEOUT = 60.0
_SETTLE_TIMEOUT = 180.0
_POLL = 0.02


@dataclass(frozen=True)
class SweepTarget:
    """What is swept: one Restate handler, the input it is called with, and how its process is started."""

    app: str
    """MODULE:APP served by `paidtwice.agent.host`."""
    service: str
    """The service's name in the user's code."""
    handler: str
    """The handler called."""
    input: Any
    """The JSON input of every invocation."""
    mode: str
    """What the records call the agent's mode: "naive"/"journaled" for the deck's agent, "app" otherwise."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment of the agent process."""
    deck: bool = False
    """The deck's agent names its service from PAIDTWICE_SERVICE; any other app is renamed by the host."""
    cwd: str | None = None
    """Directory the agent runs in (the user's project, so MODULE imports)."""
    stuck_after: int | None = 3
    """Settle a point as stuck after this many journal mismatches in a row; None: wait until it pauses. A
    mismatch is deterministic: the next attempts replay the same code against the same journal. (A service
    without a retry policy of its own gets the server's: 70 attempts, up to a minute apart, then pause.)"""


def deck_target(mode: str) -> SweepTarget:
    """The deck's agent in one mode."""
    return SweepTarget(
        app=DECK_AGENT,
        service="Agent",
        handler="run",
        input=QUESTION,
        mode=mode,
        # A longer pause than the deck's 2 s gives a loaded machine room to land the kill inside it; no count
        # depends on its length.
        env=(("PAIDTWICE_AGENT_MODE", mode), ("PAIDTWICE_PAUSE_S", "5")),
        deck=True,
        stuck_after=None,  # its retry policy pauses it within seconds, as in the deck
    )


@dataclass(frozen=True)
class CrashPoint:
    """One moment a crash can land, derived from a clean run's timeline."""

    name: str
    """Where it is, in words: "after entry 1 (Command: Run weather)", "in flight: model call 1"."""
    order: int
    """Position in time, 1 = earliest."""
    kind: str
    """"after-entry", "model-returned", "in-flight-model", "in-flight-step" or "pause"."""
    journal_entries: int
    """Entries the journal holds at that moment."""
    gate: str | None = None
    """The host gate that stops the agent there (None: a held stub call or the pause)."""
    model_hold: int | None = None
    """The model call the stub holds open (its number within the invocation)."""
    tool_hold: int | None = None
    """The stub tool call held open."""
    pause_op: int | None = None
    """The context operation (its number in the handler's step log) that is the durable pause."""


@dataclass(frozen=True)
class PointResult:
    """What one crash point measured."""

    crash_point: str
    """The point's name."""
    order: int
    """Its position in time."""
    kind: str
    """Its kind (see CrashPoint.kind)."""
    mode: str
    """Agent mode ("naive", "journaled", or "app" for a user's agent)."""
    script: str
    """Stub script (steady, drifting, changed)."""
    status: str
    """Final status: completed, paused, or stuck (a journal mismatch on every retry; killed by the sweep)."""
    answer_matches: bool
    """The invocation completed with the clean run's answer."""
    answer: str | None
    """The answer, when completed."""
    model_calls: int
    """Model calls the stub ledger counted for the invocation."""
    extra_model_calls: int
    """Model calls beyond the clean run's."""
    model_calls_in_flight: int
    """Model calls in flight at the kill (made, answer never delivered)."""
    step_runs: tuple[tuple[str, int], ...]
    """Real executions of each ctx.run step, by name (the host's step log; replays excluded)."""
    extra_step_runs: int
    """Step executions beyond the clean run's, all steps together."""
    steps_in_flight: int
    """Step executions started and not finished at the kill."""
    tool_runs: int
    """Calls to the stub's tool endpoints (the deck's weather tool)."""
    attempts: int
    """Attempts of the invocation (sys_invocation polled; at least those the agent saw)."""
    mismatches: int
    """Attempts that failed with a journal mismatch (RT0016)."""
    journal_at_kill: int
    """Journal entries when the kill landed (read right after it)."""
    confirmed: bool
    """The journal held exactly the point's entries at the kill, and the held call was in flight."""
    invocation_id: str
    """The point's invocation."""
    wall_time: float
    """Seconds from the point's start until it settled."""

    @property
    def pays_twice(self) -> bool:
        """Paid again for work that had completed: model calls or steps beyond those cut off in flight."""
        return (
            self.extra_model_calls > self.model_calls_in_flight or self.extra_step_runs > self.steps_in_flight
        )


@dataclass(frozen=True)
class CleanRun:
    """The clean run a sweep compares against."""

    status: str
    """Final status (completed)."""
    answer: str | None
    """Its answer."""
    model_calls: int
    """Model calls it made."""
    step_runs: tuple[tuple[str, int], ...]
    """Executions of each step."""
    journal: tuple[str, ...]
    """Its journal, entry labels by index."""
    invocation_id: str
    """Its invocation."""


@dataclass(frozen=True)
class SweepMatrix:
    """Every crash point of one agent mode under one stub script."""

    mode: str
    """Agent mode."""
    script: str
    """Stub script."""
    clean: CleanRun
    """The clean run."""
    points: tuple[PointResult, ...]
    """One result per crash point, in time order."""
    wall_time: float
    """Seconds the matrix took (points ran concurrently with every other point of the sweep)."""

    def summary(self) -> list[str]:
        """What survived and what was paid again or lost, counted over the points."""
        n = len(self.points)
        outside = sum(max(0, p.extra_model_calls - p.model_calls_in_flight) for p in self.points)
        outside_at = sum(1 for p in self.points if p.extra_model_calls > p.model_calls_in_flight)
        flight = sum(p.model_calls_in_flight for p in self.points)
        step_flight = sum(p.steps_in_flight for p in self.points)
        steps_kept = sum(1 for p in self.points if p.extra_step_runs <= p.steps_in_flight)
        differ = sum(1 for p in self.points if p.status == "completed" and not p.answer_matches)
        paused = [p for p in self.points if p.status in ("paused", "stuck")]
        return [
            f"survived: the input at {n}/{n} points (every replay starts from it); completed context steps "
            f"at {steps_kept}/{n} (not run again); journaled model answers at "
            f"{n - outside_at}/{n} points (no call paid again outside the journal)",
            f"paid again: {outside} model calls made outside the journal (at {outside_at} points); "
            f"{flight} model calls and {step_flight} step runs cut off in flight",
            f"lost: {differ} points completed with a different answer; {len(paused)} ended paused or "
            f"stuck after {sum(p.mismatches for p in paused)} mismatches",
        ]


# -- the timeline ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Event:
    event: str
    n: int
    name: str
    kind: str
    at: float


def _events(step_log: Path, invocation_id: str) -> list[_Event]:
    try:
        lines = step_log.read_text().splitlines()
    except FileNotFoundError:
        return []
    events = []
    for line in lines:
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except ValueError:
            continue  # a line cut by the kill
        if raw.get("invocation") == invocation_id:
            events.append(
                _Event(
                    str(raw["event"]),
                    int(raw.get("n", 0)),
                    str(raw.get("name", "")),
                    str(raw.get("kind", "")),
                    float(raw["at"]),
                )
            )
    return events


def derive_points(
    events: Sequence[_Event], journal: Sequence[str], tool_starts: Sequence[float] = ()
) -> list[CrashPoint]:
    """The distinct crash moments of a clean timeline, in time order.

    `journal` is the clean journal's labels; `tool_starts` when each stub tool call began (a step that makes
    one is held at the stub, so the tool's own endpoint sees the call cut off). Two moments with the same
    journal and the same calls made are one moment; a model answer received inside a step is not journaled
    until the step ends, so it is the same moment as the call in flight.
    """
    points: list[CrashPoint] = []
    entries = 1  # the input
    counts = {"model_start": 0, "model_end": 0, "step_start": 0}
    in_step: _Event | None = None
    last_step = ""
    last_key: tuple[int, ...] | None = None
    step_has_model: set[int] = set()
    current: int | None = None
    for event in events:
        if event.event == "step_start":
            current = event.n
        elif event.event == "step_end":
            current = None
        elif event.event == "model_start" and current is not None:
            step_has_model.add(current)

    def label(count: int) -> str:
        index = count - 1
        return f"entry {index} ({journal[index]})" if index < len(journal) else f"entry {index}"

    def add(kind: str, name: str, **where: Any) -> None:
        nonlocal last_key
        key = (entries, *counts.values())
        if kind in ("after-entry", "model-returned"):
            if key == last_key:
                return
            last_key = key
        points.append(CrashPoint(name, len(points) + 1, kind, entries, **where))

    for i, event in enumerate(events):
        if event.event == "model_start":
            if in_step is None:
                add("after-entry", f"after {label(entries)}", gate=f"model:{event.n}:before")
            counts["model_start"] += 1
            add("in-flight-model", f"in flight: model call {event.n}", model_hold=event.n)
        elif event.event == "model_end":
            counts["model_end"] += 1
            if in_step is None:
                add(
                    "model-returned",
                    f"after model call {event.n} returned (not journaled)",
                    gate=f"model:{event.n}:after",
                )
        elif event.event == "op":
            add("after-entry", f"after {label(entries)}", gate=f"op:{event.n}:before")
            entries += 1  # its command
            if event.kind == "sleep":
                after = f" after {last_step}" if last_step else ""
                add("pause", f"in pause{after}", pause_op=event.n)
                entries += 1  # the handler went on, so the pause's completion is journaled
        elif event.event == "step_start":
            in_step = event
            add("after-entry", f"after {label(entries)}", gate=f"step:{event.n}:before")
            counts["step_start"] += 1
            if event.n not in step_has_model:
                end = next(
                    (e.at for e in events[i:] if e.event == "step_end" and e.n == event.n), float("inf")
                )
                tool = [k for k, at in enumerate(tool_starts, start=1) if event.at <= at <= end]
                if tool:
                    add("in-flight-step", f"in flight: step {event.name}", tool_hold=tool[0])
                else:
                    add("in-flight-step", f"in flight: step {event.name}", gate=f"step:{event.n}:inside")
        elif event.event == "step_end":
            in_step = None
            last_step = event.name
            entries += 1  # its result
    return points


# -- runs ---------------------------------------------------------------------------------------------


class _Run:
    """One invocation of the target on an agent of its own, on the lab's server and a lane of its own."""

    def __init__(self, lab: Lab, target: SweepTarget, script: Script, *, tag: str, gate: str | None) -> None:
        self.lab = lab
        self.target = target
        safe = re.sub(r"[^A-Za-z0-9]", "_", tag)
        self.service = f"{re.sub(r'[^A-Za-z0-9_]', '_', target.service)}_{safe}"
        self.lane: Lane = lab.stub.open_lane(script, name=f"sweep-{safe.lower()}")
        workdir = lab.workdir / "sweep" / safe
        workdir.mkdir(parents=True, exist_ok=True)
        self.step_log = workdir / "steps.jsonl"
        env = dict(os.environ)
        env.update(dict(target.env))
        env.update(
            {
                "OPENAI_BASE_URL": self.lane.base_url,
                "OPENAI_API_KEY": "paidtwice-stub",
                "PAIDTWICE_TOOLS_URL": self.lane.tools_url,
                "PAIDTWICE_STEP_LOG": str(self.step_log),
                "PAIDTWICE_GATE": gate or "",
            }
        )
        if target.deck:
            env["PAIDTWICE_SERVICE"] = self.service
        else:
            env["PAIDTWICE_SERVICE_AS"] = f"{target.service}={self.service}"
        cwd = Path(target.cwd) if target.cwd else None
        self.agent = AgentHost(
            target=target.app, env=env, workdir=workdir, name="agent", cwd=cwd, forkserver=lab.forkserver
        )
        self.invocation_id = ""

    def start(self, *, replacement: bool = False) -> str:
        self.agent.start()
        if replacement:
            # The replacement loads (without the gate) before the invocation is sent, so the kill follows
            # the moment at once: a point's moment is a gate, a held call or a pause, and even a forked
            # agent's tenth of a second of loading would move the kill away from it.
            self.agent.env["PAIDTWICE_GATE"] = ""
            self.agent.prepare()
            self.agent.wait_ready()
        self.lab.admin.register_deployment(self.agent.uri)
        self.invocation_id = self.lab.ingress.send(self.service, self.target.handler, self.target.input)
        return self.invocation_id

    def journal(self) -> list[JournalEntry]:
        return self.lab.sql.journal(self.invocation_id)

    def steps(self) -> tuple[tuple[str, int], ...]:
        counts: dict[str, int] = {}
        for event in _events(self.step_log, self.invocation_id):
            if event.event == "step_start":
                counts[event.name] = counts.get(event.name, 0) + 1
        return tuple(sorted(counts.items()))

    def answer(self, status: str) -> str | None:
        if status != "completed":
            return None
        response = self.lab.ingress.attach(self.invocation_id, timeout=30.0)
        return json.dumps(response.json()) if response.status_code == 200 else None


def _wait(
    lab: Lab, stop: threading.Event, what: str, condition: Callable[[], bool], *, timeout: float
) -> None:
    """Poll `condition`; `stop` is the sweep's own: set when one point failed, so the others stop waiting
    (the lab, which may be shared, lives on)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if lab.cancelled.is_set() or stop.is_set():
            raise LabCancelled(f"interrupted while waiting for {what}")
        if time.monotonic() > deadline:
            raise ExperimentError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(_POLL)


def _clean(
    lab: Lab, stop: threading.Event, watcher: _Watcher, target: SweepTarget, script: Script, tag: str
) -> tuple[CleanRun, _Run]:
    run = _Run(lab, target, script, tag=tag, gate=None)
    with run.agent:
        run.start()
        watch = watcher.watch(run.invocation_id)
        try:
            _wait(
                lab,
                stop,
                f"clean run {run.invocation_id} to settle",
                lambda: _settled(watch.last),
                timeout=60.0,
            )
        finally:
            watcher.forget(run.invocation_id)
        row = lab.sql.invocation(run.invocation_id)
        status = row.status if row else "unknown"
        if status != "completed":
            raise ExperimentError(f"the clean run of {target.service}/{target.handler} ended {status}")
        clean = CleanRun(
            status=status,
            answer=run.answer(status),
            model_calls=len(run.lane.model_calls(run.invocation_id)),
            step_runs=run.steps(),
            journal=tuple(e.label() for e in run.journal()),
            invocation_id=run.invocation_id,
        )
    return clean, run


def _stuck(attempts: Sequence[AgentAttempt], after: int | None) -> bool:
    """The last `after` attempts that reached the agent all failed with a journal mismatch."""
    if after is None:
        return False
    tail = [a.error_code for a in attempts[-after:]]
    return len(tail) == after and all(code == MISMATCH_ERROR_CODE for code in tail)


def _point(
    lab: Lab,
    stop: threading.Event,
    watcher: _Watcher,
    target: SweepTarget,
    script: Script,
    script_name: str,
    clean: CleanRun,
    point: CrashPoint,
    *,
    tag: str,
    restart_delay: float,
) -> PointResult:
    started = time.time()
    if point.model_hold is not None:
        script = dataclasses.replace(script, hold=Hold(point.model_hold, _HOLD_SECONDS))
    if point.tool_hold is not None:
        script = dataclasses.replace(script, tool_hold=Hold(point.tool_hold, _HOLD_SECONDS))
    run = _Run(lab, target, script, tag=tag, gate=point.gate)
    with run.agent:
        invocation_id = run.start(replacement=True)
        watch = watcher.watch(invocation_id)
        try:
            lane = run.lane

            def there() -> bool:
                """Is the agent at the moment? Cheap checks only: the step log and the stub's ledgers."""
                if point.gate is not None:
                    return any(e.event == "gate" for e in _events(run.step_log, invocation_id))
                if point.model_hold is not None:
                    calls = lane.model_calls(invocation_id)
                    return len(calls) >= point.model_hold and calls[point.model_hold - 1].finished is None
                if point.tool_hold is not None:
                    tools = lane.tool_runs(invocation_id)
                    return len(tools) >= point.tool_hold and tools[point.tool_hold - 1].finished is None
                if point.pause_op is not None:
                    events = _events(run.step_log, invocation_id)
                    return any(e.event == "op" and e.n == point.pause_op for e in events)
                return True

            def at_moment() -> bool:
                # The journal is read (a SQL query) only once the cheap signs say so: dozens of points polling
                # the server at once would slow it down past a durable pause.
                return there() and len(run.journal()) >= point.journal_entries

            _wait(lab, stop, f"{point.name} ({invocation_id})", at_moment, timeout=_MOMENT_TIMEOUT)
            run.agent.wait_ready()
            kill_at = run.agent.kill()
            run.agent.release(at=kill_at + restart_delay)
            if stop.wait(max(0.0, kill_at + restart_delay - time.time())) or lab.cancelled.is_set():
                raise LabCancelled("interrupted")
            run.agent.wait_up()

            def settled() -> bool:
                if _settled(watch.last):
                    return True
                # Only a target that settles on repeated mismatches needs the agent's log at every poll.
                stuck_after = target.stuck_after
                return stuck_after is not None and _stuck(run.agent.attempts(invocation_id), stuck_after)

            _wait(lab, stop, f"{invocation_id} to settle", settled, timeout=_SETTLE_TIMEOUT)
        finally:
            watcher.forget(invocation_id)
        row = watch.observe(lab.sql.invocation(invocation_id))
        # What the journal held when the kill landed, from the server's own append times (a read right after
        # the kill could already see the pause's wake-up, which the server appends without the agent).
        journal_at_kill = sum(1 for e in run.journal() if (_epoch(e.appended_at) or 0.0) <= kill_at)
        status = row.status if row else "unknown"
        agent_attempts = run.agent.attempts(invocation_id)
        if status not in ("completed", "paused") and _stuck(agent_attempts, target.stuck_after):
            # It would retry (and mismatch) until its retry policy gives up; nothing else can happen.
            status = "stuck"
            lab.admin.kill(invocation_id)
        answer = run.answer(status)
        calls = lane.model_calls(invocation_id)
        events = _events(run.step_log, invocation_id)
        first_life = [e for e in events if e.at < kill_at]
        started_steps = {e.n for e in first_life if e.event == "step_start"}
        ended_steps = {e.n for e in first_life if e.event == "step_end"}
        steps = run.steps()
        attempt_count = watch.count(agent_attempts)
        mismatches = mismatches_of(agent_attempts)
        in_flight = [c for c in calls if c.started < kill_at and c.delivered is False]
        confirmed = journal_at_kill == point.journal_entries
        if point.model_hold is not None:
            confirmed = confirmed and len(in_flight) == 1
        return PointResult(
            crash_point=point.name,
            order=point.order,
            kind=point.kind,
            mode=target.mode,
            script=script_name,
            status=status,
            answer_matches=status == "completed" and answer == clean.answer,
            answer=answer,
            model_calls=len(calls),
            extra_model_calls=len(calls) - clean.model_calls,
            model_calls_in_flight=len(in_flight),
            step_runs=steps,
            extra_step_runs=sum(n for _, n in steps) - sum(n for _, n in clean.step_runs),
            steps_in_flight=len(started_steps - ended_steps),
            tool_runs=len(lane.tool_runs(invocation_id)),
            attempts=attempt_count,
            mismatches=mismatches,
            journal_at_kill=journal_at_kill,
            confirmed=confirmed,
            invocation_id=invocation_id,
            wall_time=round(time.time() - started, 3),
        )


def sweep_targets(
    lab: Lab,
    *,
    targets: Sequence[SweepTarget],
    scripts: Sequence[tuple[str, Script]],
    restart_delay: float = DEFAULT_RESTART_DELAY,
    parallel: int = 16,
    on_point: Callable[[PointResult], None] | None = None,
) -> list[SweepMatrix]:
    """Sweep every target under every script; one matrix per (target, script), points in time order.

    Clean runs go first (concurrently); then every crash point of every matrix, `parallel` at a time, each
    on an agent, lane and invocation of its own. `on_point` sees each result as soon as it is measured.
    """
    watcher = _Watcher(lambda: lab.sql, lab.cancelled)
    lock = threading.Lock()
    started = time.time()
    stop = threading.Event()
    # Service names, lanes and work directories are the sweep's own, also when a lab sweeps more than once.
    sweep_id = lab._next_id()
    try:
        combos = [(t, name, s) for t in targets for name, s in scripts]
        with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(combos)))) as pool:
            clean_futures = [
                pool.submit(
                    _clean, lab, stop, watcher, target, script, f"s{sweep_id}_{target.mode}_{name}_clean"
                )
                for target, name, script in combos
            ]
            try:
                cleans = [f.result() for f in clean_futures]
            except BaseException:
                stop.set()
                raise
        plans = []
        for clean, run in cleans:
            tools = [t.started for t in run.lane.tool_runs(clean.invocation_id)]
            plans.append(derive_points(_events(run.step_log, clean.invocation_id), clean.journal, tools))
        jobs = [(i, point) for i, points in enumerate(plans) for point in points]

        def one(job: tuple[int, CrashPoint]) -> PointResult:
            i, point = job
            target, name, script = combos[i]
            result = _point(
                lab,
                stop,
                watcher,
                target,
                script,
                name,
                cleans[i][0],
                point,
                tag=f"s{sweep_id}_{target.mode}_{name}_{point.order}",
                restart_delay=restart_delay,
            )
            if on_point is not None:
                with lock:
                    on_point(result)
            return result

        with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(jobs)))) as pool:
            futures = [pool.submit(one, job) for job in jobs]
            try:
                results = [f.result() for f in futures]
            except BaseException:
                stop.set()  # the other points stop waiting; their agents are killed on the way out
                raise
    finally:
        watcher.stop()
    wall = round(time.time() - started, 3)
    matrices = []
    for i, (target, name, _) in enumerate(combos):
        points = tuple(r for (j, _), r in zip(jobs, results, strict=True) if j == i)
        matrices.append(SweepMatrix(target.mode, name, cleans[i][0], points, wall))
    return matrices


def sweep(
    *,
    app: str | None = None,
    service: str | None = None,
    handler: str | None = None,
    input: Any = None,
    script: str | Path | None = None,
    modes: Sequence[str] = ("naive", "journaled"),
    scripts: Sequence[str] = VARIATIONS,
    app_dir: str | Path | None = None,
    restart_delay: float = DEFAULT_RESTART_DELAY,
    parallel: int = 16,
    lab: Lab | None = None,
    on_point: Callable[[PointResult], None] | None = None,
    cluster: int = 1,
) -> list[SweepMatrix]:
    """Kill an agent at every moment of its run and measure what each replay paid again.

    Without `app`, the deck's agent is swept in each of `modes` under each of the stub's `scripts`. With
    `app` ("MODULE:APP", importable from `app_dir`), the user's own service/handler is swept, called with
    `input`, its model answers read from the `script` file in each variation named by `scripts`. A `lab`
    can be shared; otherwise one is started (a restate-server, or a cluster of `cluster` nodes, and a stub)
    and stopped before returning.
    Bad input raises a `UsageError` before anything starts.
    """
    unknown = [name for name in scripts if name not in VARIATIONS]
    if unknown or not scripts:
        raise UsageError(f"unknown script {', '.join(unknown) or '(none)'} (known: {', '.join(VARIATIONS)})")
    if app is None:
        bad = [m for m in modes if m not in ("naive", "journaled")]
        if bad or not modes:
            raise UsageError(f"unknown mode {', '.join(bad) or '(none)'} (known: naive, journaled)")
        targets = [deck_target(mode) for mode in modes]
        named = deck_scripts(scripts)
    else:
        if not service or not handler or script is None:
            raise UsageError("sweeping an app needs its service, its handler and a script file")
        cwd = str(Path(app_dir or ".").resolve())
        problem = check_app(app, service, handler, cwd=cwd)
        if problem:
            raise UsageError(problem)
        targets = [SweepTarget(app, service, handler, input, mode="app", cwd=cwd)]
        named = [(name, load_script_file(Path(script), name)) for name in scripts]
    if lab is not None:
        return sweep_targets(
            lab,
            targets=targets,
            scripts=named,
            restart_delay=restart_delay,
            parallel=parallel,
            on_point=on_point,
        )
    with Lab(cluster=cluster) as own:
        return sweep_targets(
            own,
            targets=targets,
            scripts=named,
            restart_delay=restart_delay,
            parallel=parallel,
            on_point=on_point,
        )


def check_app(app: str, service: str, handler: str, *, cwd: str) -> str | None:
    """Why the app cannot be swept (not importable, no such service or handler); None if it can."""
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice.agent.host", app, "--check", f"{service}/{handler}"],
        capture_output=True,
        text=True,
        cwd=cwd,
        # As in the sweep: the model's client is pointed at the stub (not started yet, nothing is sent).
        env={**os.environ, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "paidtwice-stub"},
        timeout=120,
    )
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return lines[-1].removeprefix("paidtwice: ") if lines else f"{app} cannot be loaded"


def deck_scripts(names: Sequence[str]) -> list[tuple[str, Script]]:
    """The stub's named scripts, for the deck's agent."""
    try:
        return [(name, script_by_name(name)) for name in names]
    except KeyError as err:
        raise ExperimentError(str(err.args[0])) from None


def write_sweep(path: Path, results: Sequence[PointResult]) -> None:
    """Write every point's record as a JSON list, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    records = [{**to_jsonable(r), "pays_twice": r.pays_twice} for r in results]
    tmp.write_text(json.dumps(records, indent=2) + "\n")
    with tmp.open("rb") as handle:
        os.fsync(handle.fileno())
    tmp.replace(path)
