"""The sweep: "if the agent dies right now, what survives?", measured at every moment a crash can land.

A clean run of the agent gives its timeline: the host's step log (every model request, context operation and
step execution, in order) beside the journal. From it come the distinct crash points: after each journal
entry (before the agent's next action), in flight inside each model call and each step, in flight inside
calls made at once (parallel calls, each held), and in each durable pause. Each point is a run of its own,
concurrently on one server and one stub: the agent is stopped at the moment (host gates, held stub calls,
or the pause), the lab confirms from the journal and the ledgers that it is there, SIGKILLs it, restarts it
after the restart delay, waits until the invocation completes or pauses, and counts what the replay paid
again against the clean run.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paidtwice._exceptions import ExperimentError, LabCancelled, UsageError
from paidtwice._words import count
from paidtwice.agent._env import GATE, agent_env
from paidtwice.agent._process import AgentAttempt, AgentHost
from paidtwice.agent._wire import MISMATCH_ERROR_CODE
from paidtwice.engine._provision import ensure_node_binary
from paidtwice.engine._sql import JournalEntry
from paidtwice.lab._bill import DEFAULT_PRICE_MODEL, PRICES_AS_OF, bill, check_price_model, extra_calls
from paidtwice.lab._command import CommandAgent, WireStep, check_command, command_label, read_wire
from paidtwice.lab._experiments import DEFAULT_RESTART_DELAY
from paidtwice.lab._records import AttemptLine, ModelLogLine, ToolLogLine, tagged, to_jsonable
from paidtwice.lab._runner import (
    DECK_AGENT,
    QUESTION,
    Lab,
    attempt_log_of,
    model_log_of,
    tool_log_of,
)
from paidtwice.lab._watch import Watcher as _Watcher
from paidtwice.lab._watch import epoch as _epoch
from paidtwice.lab._watch import mismatches_of, wait_for
from paidtwice.lab._watch import settled as _settled
from paidtwice.stub._ledger import ModelCall
from paidtwice.stub._scripts import Hold, Script, script_by_name
from paidtwice.stub._server import Lane
from paidtwice.stub._turns import VARIATIONS, ScriptFileError, load_script_file
from paidtwice.stub._usage import NO_TOKENS, TokenUsage

__all__ = [
    "CrashPoint",
    "PointResult",
    "SweepMatrix",
    "SweepTarget",
    "check_app",
    "deck_target",
    "derive_points",
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
    """What the records call the agent's mode: "naive"/"journaled" for the deck's agent, "app" for an app,
    the service and its command for a command ("Agent (node agent.ts)")."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment of the agent process."""
    deck: bool = False
    """The deck's agent names its service from PAIDTWICE_SERVICE; any other app is renamed by the host."""
    cwd: str | None = None
    """Directory the agent runs in (the user's project, so MODULE imports)."""
    command: str | None = None
    """A shell command that serves the deployment, in any language (then `app` is unused): started once per
    crash point in its own process group, seen through a protocol proxy (`paidtwice.lab._command`)."""
    port_env: str = "PORT"
    """The environment variable that tells the command its port."""
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
    """"after-entry", "model-returned", "in-flight-model", "in-flight-step", "in-flight-parallel" (calls or
    steps in flight at once, all held) or "pause"."""
    journal_entries: int
    """Entries the journal holds at that moment."""
    gate: str | None = None
    """The host gates that stop the agent there, comma-separated (None: held stub calls or the pause)."""
    model_holds: tuple[int, ...] = ()
    """The model calls the stub holds open (their numbers within the invocation); all are in flight at the
    moment."""
    tool_hold: int | None = None
    """The stub tool call held open."""
    pause_op: int | None = None
    """The context operation (its number in the handler's step log) that is the durable pause."""
    begins: float = 0.0
    """When the moment began in the clean run (wall clock): a crash from then until the next point's
    moment lands at this point."""
    covers: float = 0.0
    """The share (0..1) of the clean run's time, from its first event to its output, that is this moment:
    the chance that a crash at a uniformly random moment of the run lands here."""
    hold_entries: int | None = None
    """A command's deployment: the protocol proxy holds the server's frame that brings the journal to this
    many entries (or the attempt that starts with them), so the agent waits there."""


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
    """Agent mode ("naive", "journaled", "app" for a user's app, or a command's label: SweepTarget.mode)."""
    script: str
    """Stub script (steady, drifting, changed)."""
    status: str
    """Final status: completed, paused, stuck (a journal mismatch on every retry; killed by the sweep) or
    unanswered (the replay made a model call no turn of the script answers; killed by the sweep)."""
    answer_matches: bool
    """The invocation completed with the clean run's answer."""
    answer: str | None
    """The answer, when completed."""
    model_calls: int
    """Model calls the stub ledger counted on the point's lane (its own, serving this one invocation)."""
    extra_model_calls: int
    """Model calls beyond the clean run's."""
    model_calls_in_flight: int
    """Model calls in flight at the kill (made, answer never delivered)."""
    model_answers_at_kill: int
    """Model answers delivered to the agent before the kill (the stub's ledger)."""
    answers_asked_again: int
    """Model calls after the kill for a turn of the conversation answered before it: answers paid for again
    (each retry that asks again counts). Zero when every answer that had come back was journaled."""
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
    """The journal held exactly the point's entries at the kill, and the held calls were in flight."""
    unanswered: tuple[str, ...]
    """Why each model call no turn of the script answers was not answered (the stub's ledger); empty when
    every call was answered."""
    invocation_id: str
    """The point's invocation."""
    wall_time: float
    """Seconds from the point's start until it settled."""
    started_at: float | None = None
    """Wall-clock time (seconds since the epoch) the point started; the `at` of its logs count from it."""
    killed_at: float | None = None
    """Seconds from the point's start that the kill landed."""
    down_time: float | None = None
    """Measured seconds from the kill until the agent listened again."""
    model_log: tuple[ModelLogLine, ...] = ()
    """Every model call of the point's invocation, in order."""
    tool_log: tuple[ToolLogLine, ...] = ()
    """Every call to the stub's tool endpoints, in order."""
    attempt_log: tuple[AttemptLine, ...] = ()
    """Every attempt, in order (those that found the agent down included)."""
    journal: tuple[JournalEntry, ...] = ()
    """The final journal."""
    covers: float = 0.0
    """The share of the clean run's time this moment covers (see CrashPoint.covers)."""
    usage: TokenUsage = NO_TOKENS
    """Tokens billed for the point's model calls."""
    cost_usd: float = 0.0
    """Their price in dollars, at `price_model`."""
    extra_cost_usd: float = 0.0
    """What a crash at this moment cost: the price of the calls it added, every call that is not the first
    delivered answer of its turn (as for runs; with the steady script that is the cost beyond the clean
    run's, to the token)."""
    price_model: str = ""
    """The model whose prices the dollars are at."""
    prices_as_of: str = ""
    """The price data's date."""

    @property
    def pays_twice(self) -> bool:
        """Paid again for work that had completed: an answer asked for again, model calls or steps beyond
        those cut off in flight."""
        return (
            self.answers_asked_again > 0
            or self.extra_model_calls > self.model_calls_in_flight
            or self.extra_step_runs > self.steps_in_flight
        )

    def shorter_path(self, clean: CleanRun) -> str | None:
        """How the replay that completed took a shorter path than the clean run's, in words; None if it did
        not (a replay that ended paused or stuck did not finish any path)."""
        if self.status != "completed" or (self.extra_model_calls >= 0 and self.extra_step_runs >= 0):
            return None
        ran = dict(self.step_runs)
        skipped = [name for name, n in clean.step_runs if ran.get(name, 0) < n]
        parts = []
        if skipped:
            parts.append("answered without " + ", ".join(f"step {name}" for name in skipped))
        parts.append(
            f"{count(self.model_calls, 'model call')} in all, the clean run {clean.model_calls}"
            + (f" ({self.model_calls_in_flight} cut off in flight)" if self.model_calls_in_flight else "")
        )
        return "; ".join(parts)


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
    journaled_model_calls: int
    """Model calls made inside a ctx.run step (the host's step log), so that their answers are journaled."""
    usage: TokenUsage = NO_TOKENS
    """Tokens billed for its model calls."""
    cost_usd: float = 0.0
    """Their price in dollars."""


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

    @property
    def expected_crash_cost_usd(self) -> float:
        """The expected extra dollars of one crash at a uniformly random moment of a clean run: each
        point's extra dollars weighted by the share of the clean run's time it covers."""
        return sum(p.covers * p.extra_cost_usd for p in self.points)

    def cost_per_thousand(self, crash_rate: float) -> float:
        """Expected extra dollars per 1,000 invocations when `crash_rate` of every 1,000 crash once."""
        return crash_rate * self.expected_crash_cost_usd

    def summary(self) -> list[str]:
        """What survived and what was paid again or lost, counted over the points."""
        n = len(self.points)
        outside = sum(p.answers_asked_again for p in self.points)
        outside_at = sum(1 for p in self.points if p.answers_asked_again)
        answered = [p for p in self.points if p.model_answers_at_kill]
        kept = sum(1 for p in answered if not p.answers_asked_again)
        flight = sum(p.model_calls_in_flight for p in self.points)
        step_flight = sum(p.steps_in_flight for p in self.points)
        steps_kept = sum(1 for p in self.points if p.extra_step_runs <= p.steps_in_flight)
        differ = sum(1 for p in self.points if p.status == "completed" and not p.answer_matches)
        paused = [p for p in self.points if p.status in ("paused", "stuck")]
        if not self.clean.journaled_model_calls:
            answers = (
                f"model answers: no model call is journaled in this agent (none of the clean run's "
                f"{count(self.clean.model_calls, 'model call')} is made inside a ctx.run step)"
            )
        elif not answered:
            answers = "model answers: no point had a model answer before the kill"
        else:
            answers = (
                f"journaled model answers at {kept}/{len(answered)} points where an answer had come back "
                "before the kill (not asked for again)"
            )
        return [
            f"survived: the input at {n}/{n} points (every replay starts from it); completed context steps "
            f"at {steps_kept}/{n} (not run again); {answers}",
            f"paid again: {count(outside, 'model answer')} asked for again outside the journal "
            f"(at {count(outside_at, 'point')}); {count(flight, 'model call')} and "
            f"{count(step_flight, 'step run')} cut off in flight",
            f"lost: {count(differ, 'point')} completed with a different answer; {len(paused)} ended paused "
            f"or stuck after {count(sum(p.mismatches for p in paused), 'mismatch', 'mismatches')}",
        ]


# -- the timeline ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Event:
    event: str
    n: int
    name: str
    """A step's or an operation's name; a gate line's gate."""
    kind: str
    at: float
    step: int = 0
    """For a model request: the executed step it was made in (0: none)."""


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
                    str(raw.get("name", raw.get("gate", ""))),
                    str(raw.get("kind", "")),
                    float(raw["at"]),
                    int(raw.get("step", 0)),
                )
            )
    return events


@dataclass(frozen=True)
class _Group:
    """Calls and steps in flight at once in the clean run (their intervals in the step log overlap)."""

    first: int
    """Index of the group's first event in the step log."""
    last: int
    """Index of its last event."""
    model_calls: tuple[int, ...]
    """The model call each branch makes first (held at the stub to stop it in flight)."""
    quiet_steps: tuple[tuple[int, str], ...]
    """Steps that make no model call (number, name): stopped by a gate inside them."""
    answers_unjournaled: bool
    """Every branch is a model call outside any step: their answers come back without reaching the journal."""


def _parallel_groups(events: Sequence[_Event]) -> list[_Group]:
    """The groups of two or more branches (steps, or model calls outside steps) whose intervals overlap."""
    branches: list[tuple[int, int, str, int, str]] = []  # first index, last index, kind, n, name
    opened: dict[tuple[str, int], int] = {}
    for i, event in enumerate(events):
        if event.event == "step_start" or (event.event == "model_start" and event.step == 0):
            opened[(event.event.split("_")[0], event.n)] = i
        elif event.event in ("step_end", "model_end"):
            kind = event.event.split("_")[0]
            first = opened.pop((kind, event.n), None)
            if first is not None:
                branches.append((first, i, kind, event.n, event.name))
    for (kind, n), first in opened.items():  # still open at the end of the log: in flight until then
        branches.append((first, len(events) - 1, kind, n, events[first].name))
    branches.sort()
    clusters: list[list[tuple[int, int, str, int, str]]] = []
    for branch in branches:
        if clusters and branch[0] < max(b[1] for b in clusters[-1]):
            clusters[-1].append(branch)
        else:
            clusters.append([branch])
    groups = []
    for cluster in clusters:
        if len(cluster) < 2:
            continue
        calls: list[int] = []
        quiet: list[tuple[int, str]] = []
        for _, _, kind, n, name in cluster:
            if kind == "model":
                calls.append(n)
                continue
            inside = [e.n for e in events if e.event == "model_start" and e.step == n]
            if inside:
                calls.append(min(inside))
            else:
                quiet.append((n, name))
        groups.append(
            _Group(
                first=cluster[0][0],
                last=max(b[1] for b in cluster),
                model_calls=tuple(sorted(calls)),
                quiet_steps=tuple(quiet),
                answers_unjournaled=all(b[2] == "model" for b in cluster),
            )
        )
    return groups


def _together(calls: Sequence[int], steps: Sequence[str]) -> str:
    """ "model calls 2 and 3", "model call 2 and step weather", "steps a and b"."""
    parts = []
    if calls:
        numbers = [str(n) for n in calls]
        listed = numbers[0] if len(numbers) == 1 else ", ".join(numbers[:-1]) + " and " + numbers[-1]
        parts.append(("model calls " if len(calls) > 1 else "model call ") + listed)
    if steps:
        parts.append(("steps " if len(steps) > 1 else "step ") + " and ".join(steps))
    return " and ".join(parts)


def derive_points(
    events: Sequence[_Event],
    journal: Sequence[str],
    tool_starts: Sequence[float] = (),
    *,
    ended: float | None = None,
) -> list[CrashPoint]:
    """The distinct crash moments of a clean timeline, in time order.

    `journal` is the clean journal's labels; `tool_starts` when each stub tool call began (a step that makes
    one is held at the stub, so the tool's own endpoint sees the call cut off). Two moments with the same
    journal and the same calls made are one moment; a model answer received inside a step is not journaled
    until the step ends, so it is the same moment as the call in flight. Each point covers the clean run's
    time from its moment to the next point's; the last, to `ended` (the run's output; default: the last
    event).

    Branches in flight at once (parallel model calls or steps) give one moment while all of them are in
    flight, every branch held, and, for model calls outside the journal, one once all their answers came
    back: stopping one branch alone would leave the others running into the kill, a moment no run repeats.
    Operations made one after another without an await between them reach the journal together (the SDK
    sends its commands when the handler awaits), so only the first of them is a moment of its own.
    """
    points: list[CrashPoint] = []
    entries = 1  # the input
    counts = {"model_start": 0, "model_end": 0, "step_start": 0}
    in_step: _Event | None = None
    last_step = ""
    last_key: tuple[int, ...] | None = None
    step_has_model: set[int] = {e.step for e in events if e.event == "model_start" and e.step}
    current: int | None = None
    for event in events:
        if event.event == "step_start":
            current = event.n
        elif event.event == "step_end":
            current = None
        elif event.event == "model_start" and current is not None and not event.step:
            step_has_model.add(current)  # a step log written before model requests named their step
    groups = {group.first: group for group in _parallel_groups(events)}
    group: _Group | None = None
    group_entries = 0

    def label(count: int) -> str:
        index = count - 1
        return f"entry {index} ({journal[index]})" if index < len(journal) else f"entry {index}"

    begins = events[0].at if events else 0.0

    def add(kind: str, name: str, **where: Any) -> None:
        nonlocal last_key
        key = (entries, *counts.values())
        if kind in ("after-entry", "model-returned"):
            if key == last_key:
                return
            last_key = key
        points.append(CrashPoint(name, len(points) + 1, kind, entries, begins=begins, **where))

    for i, event in enumerate(events):
        # An "after entry" moment began when the event before it ended (a pause ends only when the handler
        # goes on, at this event); every other moment begins at its own event.
        before = events[i - 1] if i > 0 else None
        begins = before.at if before is not None and before.kind != "sleep" else event.at
        if group is None and i in groups:
            group, group_entries = groups[i], entries
        if group is not None:
            # Inside a parallel group: keep counting, but its only moments are the group's own.
            if event.event in counts:
                counts[event.event] += 1
            if event.event == "op":
                entries += 2 if event.kind == "sleep" else 1
            elif event.event == "step_end":
                last_step = event.name
                entries += 1
            if i == group.last:
                together = _together(group.model_calls, [name for _, name in group.quiet_steps])
                gates = ",".join(f"step:{n}:inside" for n, _ in group.quiet_steps) or None
                points.append(
                    CrashPoint(
                        f"in flight: {together} together",
                        len(points) + 1,
                        "in-flight-parallel",
                        group_entries,
                        gate=gates,
                        model_holds=group.model_calls,
                        begins=event.at,
                    )
                )
                if group.answers_unjournaled:
                    add(
                        "model-returned",
                        f"after {together} returned (not journaled)",
                        gate=",".join(f"model:{n}:after" for n in group.model_calls),
                    )
                group = None
            continue
        if event.event == "model_start":
            if in_step is None:
                add("after-entry", f"after {label(entries)}", gate=f"model:{event.n}:before")
            counts["model_start"] += 1
            begins = event.at
            add("in-flight-model", f"in flight: model call {event.n}", model_holds=(event.n,))
        elif event.event == "model_end":
            counts["model_end"] += 1
            begins = event.at
            if in_step is None:
                add(
                    "model-returned",
                    f"after model call {event.n} returned (not journaled)",
                    gate=f"model:{event.n}:after",
                )
        elif event.event == "op":
            follows_op = i > 0 and events[i - 1].event == "op" and events[i - 1].kind != "sleep"
            if not follows_op:
                add("after-entry", f"after {label(entries)}", gate=f"op:{event.n}:before")
            entries += 1  # its command
            if event.kind == "sleep":
                after = f" after {last_step}" if last_step else ""
                begins = event.at
                add("pause", f"in pause{after}", pause_op=event.n)
                entries += 1  # the handler went on, so the pause's completion is journaled
        elif event.event == "step_start":
            in_step = event
            add("after-entry", f"after {label(entries)}", gate=f"step:{event.n}:before")
            counts["step_start"] += 1
            begins = event.at
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
    return _with_cover(points, ended if ended is not None else (events[-1].at if events else 0.0))


def _with_cover(points: list[CrashPoint], ended: float) -> list[CrashPoint]:
    if not points:
        return points
    # The agent's log and the server's append times are read from two processes: a millisecond's
    # disorder between them must not make a share negative or the shares add up past the whole.
    ends = [p.begins for p in points[1:]] + [max(ended, points[-1].begins)]
    widths = [max(0.0, end - p.begins) for p, end in zip(points, ends, strict=True)]
    span = sum(widths)
    if span <= 0:
        return points
    return [dataclasses.replace(p, covers=width / span) for p, width in zip(points, widths, strict=True)]


# -- runs ---------------------------------------------------------------------------------------------


class _Run:
    """One invocation of the target on an agent of its own, on the lab's server and a lane of its own."""

    def __init__(
        self,
        lab: Lab,
        target: SweepTarget,
        script: Script,
        *,
        tag: str,
        gate: str | None,
        model_latency: float = 0.0,
        hold: int | None = None,
    ) -> None:
        self.lab = lab
        self.target = target
        safe = re.sub(r"[^A-Za-z0-9]", "_", tag)
        self.service = f"{re.sub(r'[^A-Za-z0-9_]', '_', target.service)}_{safe}"
        self.lane: Lane = lab.stub.open_lane(script, name=f"sweep-{safe.lower()}")
        self.lane.latency = model_latency
        workdir = lab.workdir / "sweep" / safe
        workdir.mkdir(parents=True, exist_ok=True)
        self.step_log = workdir / "steps.jsonl"
        env = agent_env(
            given=dict(target.env),
            openai_url=self.lane.base_url,
            anthropic_url=self.lane.anthropic_base_url,
            tools_url=self.lane.tools_url,
            step_log=str(self.step_log),
            gate=gate or "",
            service=self.service if target.deck else None,
            # A command's service is renamed by its proxy, not by a host.
            service_as=None
            if target.deck or target.command is not None
            else f"{target.service}={self.service}",
        )
        cwd = Path(target.cwd) if target.cwd else None
        self.agent: AgentHost | CommandAgent
        if target.command is not None:
            self.lane.single = True
            env.update(_node_path())  # the stub's URLs and keys are in `env` already, as for any agent
            self.agent = CommandAgent(
                command=target.command,
                env=env,
                workdir=workdir,
                service=target.service,
                renamed=self.service,
                port_env=target.port_env,
                cwd=cwd,
            )
            self.agent.proxy.hold_entries = hold
        else:
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
            self.agent.env[GATE] = ""
            self.agent.prepare()
            self.agent.wait_ready()
        self.lab.admin.register_deployment(self.agent.uri)
        self.invocation_id = self.lab.ingress.send(self.service, self.target.handler, self.target.input)
        return self.invocation_id

    def journal(self) -> list[JournalEntry]:
        return self.lab.sql.journal(self.invocation_id)

    def steps(self) -> tuple[tuple[str, int], ...]:
        counts: dict[str, int] = {}
        if isinstance(self.agent, CommandAgent):
            # A command's steps as the wire shows them: each ProposeRunCompletion is one execution.
            for step in self.agent.steps(self.invocation_id):
                if step.proposed is not None:
                    counts[step.name] = counts.get(step.name, 0) + 1
            return tuple(sorted(counts.items()))
        for event in _events(self.step_log, self.invocation_id):
            if event.event == "step_start":
                counts[event.name] = counts.get(event.name, 0) + 1
        return tuple(sorted(counts.items()))

    def answer(self, status: str) -> str | None:
        if status != "completed":
            return None
        response = self.lab.ingress.attach(self.invocation_id, timeout=30.0)
        return json.dumps(response.json()) if response.status_code == 200 else None


def _node_path() -> dict[str, str]:
    """Node 22 first on a command's PATH (TypeScript Restate SDK 1.17 needs it)."""
    node = ensure_node_binary()
    return {"PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def _command_env_for_check() -> dict[str, str]:
    """A command's environment while it is only asked what it serves: no stub runs yet, nothing is sent."""
    return {
        **agent_env(openai_url="http://127.0.0.1:9/v1", anthropic_url="http://127.0.0.1:9"),
        **_node_path(),
    }


def _step_of(call: ModelCall, steps: Sequence[WireStep], starts: Sequence[float]) -> WireStep | None:
    """The step a model call was made in, from the wire and the ledgers: the first step whose result passed
    the proxy after the call ended, unless the agent called the stub again before that result (then the
    call came before the step). The RunCommand's own time cannot tell: the proxy may read it after the
    stub has answered a fast call."""
    end = call.finished if call.finished is not None else float("inf")
    step = next((s for s in steps if s.proposed is not None and s.proposed >= end), None)
    if step is None or step.proposed is None:
        return None
    if any(end < at < step.proposed for at in starts):
        return None
    return step


def _wire_model_calls_in_steps(run: _Run) -> int:
    """Model calls that started while a step was in flight on the wire (after its RunCommand, before its
    result): their answers are the step's result, so they are journaled."""
    assert isinstance(run.agent, CommandAgent)
    steps = run.agent.steps(run.invocation_id)
    calls = run.lane.model_calls(run.invocation_id)
    starts = sorted([c.started for c in calls] + [t.started for t in run.lane.tool_runs(run.invocation_id)])
    return sum(1 for call in calls if _step_of(call, steps, starts) is not None)


def _wire_points(run: _Run) -> list[CrashPoint]:
    """The crash points of a command's clean run, from what any language shows: the frames the proxy saw
    (each attempt's start and each completion the server sent: a moment the agent waits and the proxy can
    hold), the stub's ledgers (model and tool calls, held in flight) and the journal (durable pauses).

    A model answer that came back but is not journaled yet cannot be held from outside the process (the agent
    goes on at once): that moment is not a point here, and its time counts to the call's in-flight point,
    whose crash costs the same. Each point covers the clean run's time from its moment to the next one."""
    assert isinstance(run.agent, CommandAgent)
    journal = run.journal()
    labels = [e.label() for e in journal]
    appended = [_epoch(e.appended_at) or 0.0 for e in journal]

    wire = read_wire(run.agent.wire_log, run.invocation_id)
    marks = [
        (float(r["at"]), int(r.get("entries", r.get("known", 0))))
        for r in wire
        if r["event"] in ("start", "notification", "command")
    ]
    steps = run.agent.steps(run.invocation_id)

    def entries_at(t: float, step: WireStep | None = None) -> int:
        """Entries the journal holds while a call that started at `t` is in flight, counted on the wire (the
        server's append times race with a fast call): every entry that passed the proxy before it, and the
        RunCommand of the step it is made in (by default the step whose RunCommand came before it)."""
        n = max([1, *(entries for at, entries in marks if at <= t)])
        for other in steps:
            if other is step or (step is None and other.commanded <= t <= (other.proposed or float("inf"))):
                n = max(n, *(entries for at, entries in marks if at <= other.commanded + 1e-6))
        return n

    def after(n: int) -> str:
        return f"after entry {n - 1} ({labels[n - 1]})" if n - 1 < len(labels) else f"after entry {n - 1}"

    moments: list[tuple[float, str, str, int, dict[str, Any]]] = []
    held: set[int] = set()
    for record in wire:
        if record["event"] == "start":
            n = int(record["known"])
        elif record["event"] == "notification":
            n = int(record["entries"])
        else:
            continue
        if n not in held:
            held.add(n)
            moments.append((float(record["at"]), "after-entry", after(n), n, {"hold_entries": n}))
    calls = run.lane.model_calls(run.invocation_id)
    starts = sorted([c.started for c in calls] + [t.started for t in run.lane.tool_runs(run.invocation_id)])
    for call in calls:
        where = {"model_holds": (call.call,)}
        name = f"in flight: model call {call.call}"
        moments.append(
            (
                call.started,
                "in-flight-model",
                name,
                entries_at(call.started, _step_of(call, steps, starts)),
                where,
            )
        )
    for tool in run.lane.tool_runs(run.invocation_id):
        # The step whose result had not passed the proxy when the tool was called: an SDK may send a step's
        # RunCommand only with its result (the Python SDK here), so the command's time says little.
        step = next((s for s in steps if (s.proposed or float("inf")) >= tool.started), None)
        if step is None:
            continue  # a tool called outside a step: not a step in flight
        name = f"in flight: step {step.name}"
        moments.append(
            (tool.started, "in-flight-step", name, entries_at(tool.started, step), {"tool_hold": tool.call})
        )
    # When each command passed the proxy: a pause begins there on the proxy's clock, as the moments around it
    # do (the server's append time can come before the proxy has logged the frame that preceded it).
    sent: dict[int, float] = {}
    for record in wire:
        if record["event"] == "command":
            sent.setdefault(int(record["entries"]), float(record["at"]))
    for i, entry in enumerate(journal):
        if entry.label().startswith("Command: Sleep"):
            at = sent.get(i + 1, appended[i])
            before = [s.name for s in steps if s.proposed is not None and s.proposed <= at]
            name = "in pause" + (f" after {before[-1]}" if before else "")
            moments.append((at, "pause", name, i + 1, {}))
    moments.sort(key=lambda m: m[0])
    points = [
        CrashPoint(name, order, kind, entries, begins=at, **where)
        for order, (at, kind, name, entries, where) in enumerate(moments, start=1)
    ]
    # Each moment lasts until the next one begins, the last until the server journaled the output.
    output = [at for entry, at in zip(journal, appended, strict=True) if entry.type == "Command: Output"]
    return _with_cover(points, output[0] if output else max(appended, default=0.0))


def _wait(
    lab: Lab, stop: threading.Event, what: str, condition: Callable[[], bool], *, timeout: float
) -> None:
    """Poll `condition`; `stop` is the sweep's own: set when one point failed, so the others stop waiting
    (the lab, which may be shared, lives on)."""
    wait_for(what, condition, timeout=timeout, stop=lambda: lab.cancelled.is_set() or stop.is_set())


NO_MODEL_CALL = "no model call reached the stub: does the app read OPENAI_BASE_URL or ANTHROPIC_BASE_URL?"
"""Why a sweep stops when its clean run made no model call: it would have nothing to check."""


def _clean(
    lab: Lab,
    stop: threading.Event,
    watcher: _Watcher,
    target: SweepTarget,
    script: Script,
    tag: str,
    model_latency: float = 0.0,
) -> tuple[CleanRun, _Run]:
    run = _Run(lab, target, script, tag=tag, gate=None, model_latency=model_latency)
    with run.agent:
        run.start()
        watch = watcher.watch(run.invocation_id)

        def failed_before_any_model_call() -> bool:
            """A model client that does not reach the stub fails the handler; it would retry for good."""
            if run.lane.model_calls():
                return False
            return any(a.last_event == "error" for a in run.agent.attempts(run.invocation_id))

        try:
            _wait(
                lab,
                stop,
                f"clean run {run.invocation_id} to settle",
                lambda: _settled(watch.last) or bool(_unanswered(run.lane)) or failed_before_any_model_call(),
                timeout=60.0,
            )
        finally:
            watcher.forget(run.invocation_id)
        if not run.lane.model_calls():
            if not _settled(watch.last):
                lab.admin.kill(run.invocation_id)
            raise UsageError(NO_MODEL_CALL)
        counted = len(run.lane.model_calls())
        seen = sum(1 for e in _events(run.step_log, run.invocation_id) if e.event == "model_start")
        # A command's deployment has no host to see its requests: its points come from the stub and the wire.
        if seen != counted and not isinstance(run.agent, CommandAgent):
            # Crash points come from what the host saw: a call it missed would be a moment never swept.
            raise UsageError(
                f"the stub counted {counted} model calls of {target.service}/{target.handler} but its "
                f"handler was seen making {seen}: it calls the model through an HTTP client paidtwice does "
                "not follow (httpx, aiohttp, http.client and the clients on them), or outside the handler"
            )
        row = lab.sql.invocation(run.invocation_id)
        status = row.status if row else "unknown"
        unanswered = [c for c in run.lane.model_calls() if c.unanswered]
        if unanswered:
            # Nothing to compare the points with: the script does not say what the model answers.
            if status not in ("completed", "paused"):
                lab.admin.kill(run.invocation_id)
            where = f"model call {unanswered[0].call} of the clean run of {target.service}/{target.handler}"
            raise ScriptFileError(f"{unanswered[0].answer.text} ({where})")
        if status != "completed":
            raise ExperimentError(f"the clean run of {target.service}/{target.handler} ended {status}")
        calls = run.lane.model_calls()
        paid = bill(calls, lab.price_model)
        clean = CleanRun(
            status=status,
            answer=run.answer(status),
            model_calls=len(calls),
            usage=paid.usage,
            cost_usd=paid.cost_usd,
            step_runs=run.steps(),
            journal=tuple(e.label() for e in run.journal()),
            invocation_id=run.invocation_id,
            journaled_model_calls=(
                _wire_model_calls_in_steps(run)
                if isinstance(run.agent, CommandAgent)
                else _model_calls_in_steps(_events(run.step_log, run.invocation_id))
            ),
        )
    return clean, run


def _model_calls_in_steps(events: Sequence[_Event]) -> int:
    """Model requests made while a ctx.run step was executing: their answers are the step's result."""
    inside = 0
    open_steps: set[int] = set()
    for event in events:
        if event.event == "step_start":
            open_steps.add(event.n)
        elif event.event == "step_end":
            open_steps.discard(event.n)
        elif event.event == "model_start" and open_steps:
            inside += 1
    return inside


def _unanswered(lane: Lane) -> tuple[str, ...]:
    """Why each model call on the lane (one invocation's) that no turn of the script answers was not
    answered."""
    return tuple(f"{c.answer.text} (model call {c.call})" for c in lane.model_calls() if c.unanswered)


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
    model_latency: float = 0.0,
) -> PointResult:
    started = time.time()
    if point.model_holds:
        first, *more = (Hold(call, _HOLD_SECONDS) for call in point.model_holds)
        script = dataclasses.replace(script, hold=first, more_holds=tuple(more))
    if point.tool_hold is not None:
        script = dataclasses.replace(script, tool_hold=Hold(point.tool_hold, _HOLD_SECONDS))
    run = _Run(
        lab, target, script, tag=tag, gate=point.gate, model_latency=model_latency, hold=point.hold_entries
    )
    with run.agent:
        invocation_id = run.start(replacement=True)
        watch = watcher.watch(invocation_id)
        try:
            lane = run.lane

            def there() -> bool:
                """Is the agent at the moment? Cheap checks only: the step log and the stub's ledgers. Every
                branch stopped: each gate logged, each held call in flight."""
                if isinstance(run.agent, CommandAgent) and point.hold_entries is not None:
                    return run.agent.held(invocation_id)
                if point.gate is not None or point.pause_op is not None:
                    events = _events(run.step_log, invocation_id)
                    if point.gate is not None:
                        logged = {e.name for e in events if e.event == "gate"}
                        if not set(point.gate.split(",")) <= logged:
                            return False
                    if point.pause_op is not None:
                        if not any(e.event == "op" and e.n == point.pause_op for e in events):
                            return False
                if point.model_holds:
                    calls = lane.model_calls()
                    if not all(len(calls) >= n and calls[n - 1].finished is None for n in point.model_holds):
                        return False
                if point.tool_hold is not None:
                    tools = lane.tool_runs()
                    n = point.tool_hold
                    return len(tools) >= n and tools[n - 1].finished is None
                return True

            def at_moment() -> bool:
                # The journal is read (a SQL query) only once the cheap signs say so: dozens of points polling
                # the server at once would slow it down past a durable pause.
                return there() and len(run.journal()) >= point.journal_entries

            try:
                _wait(lab, stop, f"{point.name} ({invocation_id})", at_moment, timeout=_MOMENT_TIMEOUT)
            except ExperimentError as err:
                # Say what was missing: the stop (gate, hold, held call) or the journal's entries.
                made = [(c.call, c.finished is None) for c in lane.model_calls(invocation_id)]
                raise ExperimentError(
                    f"{err}: stopped there {there()}, journal {len(run.journal())} of "
                    f"{point.journal_entries} entries, model calls (number, open) {made}"
                ) from None
            run.agent.wait_ready()
            kill_at = run.agent.kill()
            run.agent.release(at=kill_at + restart_delay)
            if stop.wait(max(0.0, kill_at + restart_delay - time.time())) or lab.cancelled.is_set():
                raise LabCancelled("interrupted")
            up_at = run.agent.wait_up()

            def settled() -> bool:
                if _settled(watch.last) or _unanswered(lane):
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
        journal = tuple(run.journal())
        journal_at_kill = sum(1 for e in journal if (_epoch(e.appended_at) or 0.0) <= kill_at)
        status = row.status if row else "unknown"
        agent_attempts = run.agent.attempts(invocation_id)
        unanswered = _unanswered(lane)
        if status not in ("completed", "paused") and unanswered:
            # Each retry would ask the same call again, and no turn of the script answers it.
            status = "unanswered"
            lab.admin.kill(invocation_id)
        elif status not in ("completed", "paused") and _stuck(agent_attempts, target.stuck_after):
            # It would retry (and mismatch) until its retry policy gives up; nothing else can happen.
            status = "stuck"
            lab.admin.kill(invocation_id)
        answer = run.answer(status)
        calls = lane.model_calls()
        tools = lane.tool_runs()
        events = _events(run.step_log, invocation_id)
        first_life = [e for e in events if e.at < kill_at]
        started_steps = {e.n for e in first_life if e.event == "step_start"}
        ended_steps = {e.n for e in first_life if e.event == "step_end"}
        if isinstance(run.agent, CommandAgent):
            # A step is in flight from its RunCommand until its result; the SDK sends the command first.
            wire = run.agent.steps(invocation_id)
            started_steps = {i for i, w in enumerate(wire) if w.commanded < kill_at}
            ended_steps = {i for i, w in enumerate(wire) if w.proposed is not None and w.proposed < kill_at}
        steps = run.steps()
        attempt_count = watch.count(agent_attempts)
        mismatches = mismatches_of(agent_attempts)
        in_flight = [c for c in calls if c.started < kill_at and c.delivered is False]
        answered = [c for c in calls if c.delivered and c.finished is not None and c.finished <= kill_at]
        answered_turns = {c.turn for c in answered}
        asked_again = [c for c in calls if c.started > kill_at and c.turn in answered_turns]
        confirmed = journal_at_kill == point.journal_entries
        if point.model_holds:
            confirmed = confirmed and len(in_flight) == len(point.model_holds)
        paid = bill(calls, lab.price_model)
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
            model_answers_at_kill=len(answered),
            answers_asked_again=len(asked_again),
            step_runs=steps,
            extra_step_runs=sum(n for _, n in steps) - sum(n for _, n in clean.step_runs),
            steps_in_flight=len(started_steps - ended_steps),
            tool_runs=len(tools),
            attempts=attempt_count,
            mismatches=mismatches,
            journal_at_kill=journal_at_kill,
            confirmed=confirmed,
            unanswered=unanswered,
            invocation_id=invocation_id,
            wall_time=round(time.time() - started, 3),
            started_at=started,
            killed_at=round(kill_at - started, 3),
            down_time=round(up_at - kill_at, 3),
            model_log=model_log_of(calls, started, price_model=lab.price_model),
            tool_log=tool_log_of(tools, started),
            attempt_log=attempt_log_of(agent_attempts, attempt_count, status, started),
            journal=journal,
            covers=point.covers,
            usage=paid.usage,
            cost_usd=paid.cost_usd,
            extra_cost_usd=bill(extra_calls(calls), lab.price_model).cost_usd,
            price_model=lab.price_model,
            prices_as_of=PRICES_AS_OF,
        )


def sweep_targets(
    lab: Lab,
    *,
    targets: Sequence[SweepTarget],
    scripts: Sequence[tuple[str, Script]],
    restart_delay: float = DEFAULT_RESTART_DELAY,
    parallel: int = 16,
    on_point: Callable[[PointResult], None] | None = None,
    model_latency: float = 0.0,
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
                    _clean,
                    lab,
                    stop,
                    watcher,
                    target,
                    script,
                    f"{_tag(sweep_id, i, target, name)}_clean",
                    model_latency,
                )
                for i, (target, name, script) in enumerate(combos)
            ]
            try:
                cleans = [f.result() for f in clean_futures]
            except BaseException:
                stop.set()
                raise
        plans = []
        for clean, run in cleans:
            if isinstance(run.agent, CommandAgent):
                plans.append(_wire_points(run))
                continue
            tools = [t.started for t in run.lane.tool_runs()]
            output = [e.appended_at for e in run.journal() if e.type == "Command: Output"]
            ended = _epoch(output[0]) if output else None
            events = _events(run.step_log, clean.invocation_id)
            plans.append(derive_points(events, clean.journal, tools, ended=ended))
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
                tag=f"{_tag(sweep_id, i, target, name)}_{point.order}",
                restart_delay=restart_delay,
                model_latency=model_latency,
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


def _tag(sweep_id: int, i: int, target: SweepTarget, script: str) -> str:
    """Names the i-th (target, script) of a sweep: its services, lanes and directories are its own, also
    when one sweep has several targets of one mode."""
    return f"s{sweep_id}_{i}_{target.mode}_{script}"


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
    model_latency: float = 0.0,
    price_model: str | None = None,
    cluster: int = 1,
    command: str | None = None,
    port_env: str = "PORT",
) -> list[SweepMatrix]:
    """Kill an agent at every moment of its run and measure what each replay paid again.

    Without `app`, the deck's agent is swept in each of `modes` under each of the stub's `scripts`. With
    `app` ("MODULE:APP", importable from `app_dir`), the user's own service/handler is swept, called with
    `input`, its model answers read from the `script` file in each variation named by `scripts`. A `lab`
    can be shared; otherwise one is started (a restate-server, or a cluster of `cluster` nodes, and a stub)
    and stopped before returning. With `command` (a shell command serving a Restate deployment in any
    language, run in `app_dir`, told its port in `port_env`) instead of `app`, that deployment is swept
    through a protocol proxy. `model_latency` makes the stub's model take that many seconds per answer;
    `price_model` prices the calls (a shared lab's own price model otherwise). Bad input raises a
    `UsageError` before anything starts.
    """
    unknown = [name for name in scripts if name not in VARIATIONS]
    if unknown or not scripts:
        raise UsageError(f"unknown script {', '.join(unknown) or '(none)'} (known: {', '.join(VARIATIONS)})")
    if command is not None:
        if not service or not handler or script is None:
            raise UsageError("sweeping a command needs its service, its handler and a script file")
        where = Path(app_dir or ".").resolve()
        if not where.is_dir():
            raise UsageError(f"no directory {where}")
        named: list[tuple[str, Script]] = [(name, load_script_file(Path(script), name)) for name in scripts]
        check_dir = Path(tempfile.mkdtemp(prefix="paidtwice-check-"))
        check_env = {**os.environ, **_command_env_for_check()}
        check_command(
            command, service, handler, env=check_env, workdir=check_dir, port_env=port_env, cwd=where
        )
        shutil.rmtree(check_dir, ignore_errors=True)  # kept only when the error names the log in it
        targets = [
            SweepTarget(
                "",
                service,
                handler,
                input,
                mode=command_label(service, command),
                cwd=str(where),
                command=command,
                port_env=port_env,
            )
        ]
    elif app is None:
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
    if model_latency < 0:
        raise UsageError(f"a model latency cannot be negative ({model_latency:g})")
    if lab is not None:
        if price_model is not None:
            lab.price_model = check_price_model(price_model)
        return sweep_targets(
            lab,
            targets=targets,
            scripts=named,
            restart_delay=restart_delay,
            parallel=parallel,
            on_point=on_point,
            model_latency=model_latency,
        )
    with Lab(price_model=price_model or DEFAULT_PRICE_MODEL, cluster=cluster) as own:
        return sweep_targets(
            own,
            targets=targets,
            scripts=named,
            restart_delay=restart_delay,
            parallel=parallel,
            on_point=on_point,
            model_latency=model_latency,
        )


def check_app(app: str, service: str, handler: str, *, cwd: str) -> str | None:
    """Why the app cannot be swept (not importable, no such service or handler); None if it can."""
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice.agent.host", app, "--check", f"{service}/{handler}"],
        capture_output=True,
        text=True,
        cwd=cwd,
        # As in the sweep: the model's client is pointed at the stub (not started yet, nothing is sent).
        env=agent_env(openai_url="http://127.0.0.1:9/v1", anthropic_url="http://127.0.0.1:9"),
        timeout=120,
    )
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return lines[-1].removeprefix("paidtwice: ") if lines else f"{app} cannot be loaded"


def deck_scripts(names: Sequence[str]) -> list[tuple[str, Script]]:
    """The stub's named scripts, for the deck's agent."""
    return [(name, script_by_name(name)) for name in names]


def write_sweep(path: Path, results: Sequence[PointResult]) -> None:
    """Write every point's record as a JSON list, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    records = [tagged("sweep-point", {**to_jsonable(r), "pays_twice": r.pays_twice}) for r in results]
    tmp.write_text(json.dumps(records, indent=2) + "\n")
    with tmp.open("rb") as handle:
        os.fsync(handle.fileno())
    tmp.replace(path)
