"""A clean run's timeline and the crash points in it, for an agent served by paidtwice's host.

The host writes a step log: one JSON line per model request and answer, context operation, step start and
end (and gate reached), each with its invocation and wall-clock time. Beside the clean journal's labels, it
is all the sweep needs to plan where to crash the agent. Nothing here talks to a server: the timeline is
data, and the crash points are a function of it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from paidtwice.results import CrashKind, CrashPoint
from paidtwice.targets._step_log import (
    StepEvent,
    called_together,
    explicit_handlers,
    gate_names,
    model_calls_in_steps,
    read_step_log,
    step_runs,
)

__all__ = [
    "COMPLETE_KINDS",
    "STATE_OPS",
    "WAIT_KINDS",
    "Span",
    "StepEvent",
    "derive_points",
    "explicit_handlers",
    "model_calls_in_steps",
    "one_moment",
    "read_step_log",
    "step_runs",
    "together",
]

STATE_OPS = frozenset({"get", "set", "clear", "clear_all", "state_keys"})
"""The host's operations on a Virtual Object's or a Workflow's state: each one journal entry, sent with the
next operation that waits on the server."""
WAIT_KINDS = frozenset({"awakeable", "promise"})
"""The host's operations that wait for something from outside: an awakeable, a Workflow's promise."""
COMPLETE_KINDS = frozenset({"complete_awakeable", "complete_promise"})
"""The host's operations that resolve or reject an awakeable (by its id) or a Workflow's promise (by its
name): a wait the handler completes itself is never waited for."""
_WAITING = frozenset({"sleep", *WAIT_KINDS})
_LAZY_READS = ("Command: GetLazyState",)
"""A state read the server answers (lazy state, `GetLazyState` and `GetLazyStateKeys`): its command and its
completion are journaled before the handler goes on."""
_ENTRIES = {"sleep": 2, "call": 3, "send": 2}
"""Journal entries an operation adds by the time the handler goes on past it: a sleep's command and its
completion; a call's command, the callee's invocation id and its result; a send's command and the id.
Any other operation (a step's command, a state command), one."""


# -- branches in flight at once -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Branch:
    """A step, or a model call outside any step, from its start to its end in the step log."""

    first: int
    """Index of its start in the step log."""
    last: int
    """Index of its end (the log's last event if it never ended)."""
    kind: str
    """"step" or "model"."""
    n: int
    """Its number."""
    name: str
    """A step's name."""
    batch: int | None = None
    """For a step: the await that started it (the index of the last context operation before its start).
    Steps the handler started with one await run at once, whatever the clean run's order of their quick
    bodies; a model call outside any step has none."""

    @property
    def span(self) -> Span:
        return Span(self.first, self.last, self.batch)


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
    steps: tuple[int, ...] = ()
    """Every branch's step number, when every branch is a step (stopped together before any of them
    starts); empty otherwise."""
    handlers: tuple[str, ...] = ()
    """The callees (SERVICE/HANDLER) whose branches are in it, in a tree of invocations."""


def _branches(events: Sequence[StepEvent]) -> list[_Branch]:
    """Every step and every model call outside a step, ordered by start."""
    branches: list[_Branch] = []
    opened: dict[tuple[str, int], tuple[int, int | None]] = {}
    last_op: int | None = None
    calls_at: int | None = None  # the swept handler's last call, while it waits on its callees
    begun: set[str] = set()  # callees whose first branch began
    for i, event in enumerate(events):
        if event.event == "op":
            last_op = i
            if not event.by:
                calls_at = -1 - i if event.kind in ("call", "send") else None
        if event.event == "step_start" or (event.event == "model_start" and event.step == 0):
            kind = event.event.split("_")[0]
            batch = last_op if kind == "step" else None
            if event.by and event.by not in begun:
                # The callees one await of the handler started (`restate.gather` of calls) run at once.
                begun.add(event.by)
                batch = calls_at
            opened[(kind, event.n)] = (i, batch)
        elif event.event in ("step_end", "model_end"):
            kind = event.event.split("_")[0]
            began = opened.pop((kind, event.n), None)
            if began is not None:
                branches.append(_Branch(began[0], i, kind, event.n, event.name, began[1]))
    for (kind, n), (first, batch) in opened.items():  # still open at the end of the log: in flight until then
        branches.append(_Branch(first, len(events) - 1, kind, n, events[first].name, batch))
    branches.sort(key=lambda b: (b.first, b.last, b.kind, b.n, b.name))
    return branches


@dataclass(frozen=True)
class Span:
    """A branch of the handler's work (a step, or a model call) from its start to its end, on any clock: the
    step log's order, or the stub's wall clock."""

    first: float
    """Its start."""
    last: float
    """Its end (the end of what was seen, if it never ended)."""
    batch: object = None
    """What started it, when several branches were started together (by one await of the handler); None
    if nothing says so."""


def one_moment(spans: Sequence[Span]) -> list[list[int]]:
    """The spans that make one moment, as runs of their indices in order of start (a span alone is a run
    of one): spans in flight at once (their intervals overlap), and spans started together (one batch),
    which run at once whatever order their quick bodies happened to run in the clean run. Stopping one of
    them alone would leave its siblings running into the kill, a moment no run repeats."""
    order = sorted(range(len(spans)), key=lambda k: (spans[k].first, spans[k].last))
    runs: list[list[int]] = []
    for k in order:
        span = spans[k]
        run = runs[-1] if runs else []
        overlaps = bool(run) and span.first < max(spans[j].last for j in run)
        batched = span.batch is not None and any(spans[j].batch == span.batch for j in run)
        if overlaps or batched:
            run.append(k)
        else:
            runs.append([k])
    return runs


def _overlapping(branches: Sequence[_Branch]) -> list[list[_Branch]]:
    """The branches that make one moment (see `one_moment`), in order."""
    return [[branches[k] for k in run] for run in one_moment([b.span for b in branches])]


def _group(events: Sequence[StepEvent], cluster: Sequence[_Branch]) -> _Group:
    calls: list[int] = []
    quiet: list[tuple[int, str]] = []
    for branch in cluster:
        if branch.kind == "model":
            calls.append(branch.n)
            continue
        inside = [e.n for e in events if e.event == "model_start" and e.step == branch.n]
        if inside:
            calls.append(min(inside))
        else:
            quiet.append((branch.n, branch.name))
    return _Group(
        first=cluster[0].first,
        last=max(b.last for b in cluster),
        model_calls=tuple(sorted(calls)),
        quiet_steps=tuple(quiet),
        answers_unjournaled=all(b.kind == "model" for b in cluster),
        steps=tuple(b.n for b in cluster) if all(b.kind == "step" for b in cluster) else (),
        handlers=tuple(sorted({events[b.first].handler for b in cluster} - {""})),
    )


def _parallel_groups(events: Sequence[StepEvent]) -> list[_Group]:
    """The groups of two or more branches (steps, or model calls outside steps) whose intervals overlap."""
    return [_group(events, cluster) for cluster in _overlapping(_branches(events)) if len(cluster) >= 2]


def together(calls: Sequence[int], steps: Sequence[str]) -> str:
    """ "model calls 2 and 3", "model call 2 and step weather", "steps a and b"."""
    parts = []
    if calls:
        parts.append(("model calls " if len(calls) > 1 else "model call ") + _listed([str(n) for n in calls]))
    if steps:
        parts.append(("steps " if len(steps) > 1 else "step ") + _listed(list(steps)))
    return " and ".join(parts)


def _listed(items: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _calls_together_in_steps(events: Sequence[StepEvent]) -> dict[int, tuple[int, ...]]:
    """Model calls one step has in flight at once (`asyncio.gather` inside a `ctx.run` action), each run of
    overlapping calls by its first call: one moment, all of them held, as for branches in flight at once."""
    spans: dict[int, tuple[int, int, int]] = {}  # call: (start, end, step)
    for i, event in enumerate(events):
        if event.event == "model_start" and event.step:
            spans[event.n] = (i, len(events) - 1, event.step)
        elif event.event == "model_end" and event.n in spans:
            first, _, step = spans[event.n]
            spans[event.n] = (first, i, step)
    by_step: dict[int, list[int]] = {}
    for n, (_, _, step) in sorted(spans.items(), key=lambda item: item[1][0]):
        by_step.setdefault(step, []).append(n)
    together: dict[int, tuple[int, ...]] = {}
    for calls in by_step.values():
        for run in one_moment([Span(spans[n][0], spans[n][1]) for n in calls]):
            if len(run) >= 2:
                together[calls[run[0]]] = tuple(sorted(calls[k] for k in run))
    return together


def _steps_with_model_calls(events: Sequence[StepEvent]) -> set[int]:
    """The steps that made a model request."""
    steps = {e.step for e in events if e.event == "model_start" and e.step}
    current: int | None = None
    for event in events:
        if event.event == "step_start":
            current = event.n
        elif event.event == "step_end":
            current = None
        elif event.event == "model_start" and current is not None and not event.step:
            steps.add(current)  # a step log written before model requests named their step
    return steps


# -- the crash points -----------------------------------------------------------------------------------


def derive_points(
    events: Sequence[StepEvent],
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
    points = _Walk(events, journal, tool_starts).points()
    return with_cover(points, ended if ended is not None else (events[-1].at if events else 0.0))


class _Walk:
    """One pass over a clean timeline: what the journal holds and what the agent has made at each event,
    and the crash points met on the way."""

    def __init__(self, events: Sequence[StepEvent], journal: Sequence[str], tool_starts: Sequence[float]):
        self.events = events
        self.journal = journal
        self.tool_starts = tool_starts
        self.found: list[CrashPoint] = []
        self.entries = 1  # the input
        self.unsent = 0  # state commands made, not sent to the server yet
        self.counts = {"model_start": 0, "model_end": 0, "step_start": 0}
        self.in_step: StepEvent | None = None
        self.last_step = ""
        self.last_key: tuple[int, ...] | None = None
        self.begins = events[0].at if events else 0.0
        self.step_has_model = _steps_with_model_calls(events)
        self.groups = {group.first: group for group in _parallel_groups(events)}
        self.group: _Group | None = None
        self.group_entries = 0
        self.together = _calls_together_in_steps(events)
        self.joined = {n for calls in self.together.values() for n in calls[1:]}
        self.pauses: set[int] = set()
        """The sleeps, awakeables and promises the handler waited out (their completion journaled before it
        went on)."""
        self.awaited_after: set[int] = set()
        """Events after which the handler waited for an awakeable or promise made before them: the wait
        ends only when the handler goes on, at the next event."""
        self.raced: StepEvent | None = None
        """An awakeable or promise not waited on alone (yet): raced against a timer made next."""
        self.waits_open: set[int] = set()
        """The awakeables and promises made and not resolved yet (their operation numbers): a moment met
        now holds their resolutions back until its kill (`CrashPoint.held_waits`)."""
        self.waits_made: dict[str, int] = {}
        """Each awakeable's id (promise's name) the handler made: its operation's number."""
        self.own_signals = 0
        """Awakeables the handler resolved itself whose signals the walk has not counted yet: each comes
        once the command is sent."""
        self.own_promises: set[str] = set()
        """The promises the handler completed itself: reading one waits for nothing."""
        self.event: StepEvent | None = None
        """The event the walk is at."""
        self.lazy_reads: set[int] = set()
        """The state reads the server answered (lazy state): the handler waited for each."""
        self.calls_out = 0
        """Calls and sends the swept handler made whose invocation ids and results the walk has not
        counted yet: they reach its journal while its callees run."""
        self.gate_names = gate_names(events)
        """Each operation's, step's and model call's gates, named as the host names them."""
        self.called_together = called_together(events)
        """At a callee's first event: the gates of the callees called with it that had not begun yet."""
        self.at = 0
        """The index of the event the walk is at."""

    def points(self) -> list[CrashPoint]:
        for i, event in enumerate(self.events):
            self.event, self.at = event, i
            self._calls_answered(event)
            # An "after entry" moment began when the event before it ended (a pause ends only when the
            # handler goes on, at this event); every other moment begins at its own event.
            before = self.events[i - 1] if i > 0 else None
            paused = before is not None and before.kind in _WAITING and before.n in self.pauses
            paused = paused or (i - 1) in self.awaited_after
            self.begins = before.at if before is not None and not paused else event.at
            if self.group is None and i in self.groups:
                self.group, self.group_entries = self.groups[i], self.entries
            if self.group is not None:
                self._in_group(i, event, self.group)
            elif event.event == "model_start":
                self._model_start(event)
            elif event.event == "model_end":
                self._model_end(event)
            elif event.event == "op":
                self._op(i, event)
            elif event.event == "step_start":
                self._step_start(i, event)
            elif event.event == "step_end":
                self.in_step = None
                if not event.by:
                    self.last_step = event.name
                    self.entries += 1  # its result
            if self.group is None and not event.by:
                self._awaited_later(i, event)
        return self.found

    def _calls_answered(self, event: StepEvent) -> None:
        """The entries the swept handler's calls added to its journal by this event: a callee runs once
        its invocation id is journaled; the handler goes on once the results it awaits are."""
        if not self.calls_out:
            return
        kinds = ("Notification: CallInvocationId",) if event.by else ("Notification: Call",)
        while (following := self._following()) is not None and following.startswith(kinds):
            self.entries += 1
        if not event.by:
            self.calls_out = 0

    def _add(self, kind: CrashKind, name: str, **where: Any) -> None:
        if self.event is not None and self.event.by and kind != "after-entry":
            name = f"{name} in {self.event.handler}"
        key = (self.entries, *self.counts.values())
        if kind in ("after-entry", "model-returned"):
            if key == self.last_key:
                return
            self.last_key = key
        held = self._named("op", self.waits_open)
        entries = self._caller_waits() if self.event is not None and self.event.sent else self.entries
        self.found.append(
            CrashPoint(name, len(self.found) + 1, kind, entries, begins=self.begins, held_waits=held, **where)
        )

    def _caller_waits(self) -> int:
        """The swept handler's entries at a moment of a callee a send started: the caller does not wait for
        it, so it goes on until it attaches to it (its AttachInvocation command sent) or ends (its output
        journaled)."""
        attached = [
            i
            for i, label in enumerate(self.journal)
            if i >= self.entries and label.startswith("Notification: AttachInvocation")
        ]
        return attached[0] if attached else len(self.journal)

    def _gate(self, kind: str, n: int, moment: str) -> str:
        """The host's gate at `moment` ("before", "inside", "after") of the n-th `kind` of the log."""
        return f"{self.gate_names.get((kind, n), f'{kind}:{n}')}:{moment}"

    def _named(self, kind: str, numbers: Collection[int]) -> tuple[str, ...]:
        """The `kind`s numbered `numbers` in the log, in order, named as the host names their gates."""
        return tuple(self.gate_names.get((kind, n), f"{kind}:{n}") for n in sorted(numbers))

    def _after_entry(self, gate: str) -> None:
        if self.event is not None and self.event.by:
            # A callee's moment: the swept handler's journal waits on the call; the callee's is its own.
            gate = ",".join([gate, *self.called_together.get(self.at, ())])
            self._add("after-entry", f"in {self.event.handler}: before {_action(self.event)}", gate=gate)
            return
        index = self.entries - 1
        label = f"entry {index} ({self.journal[index]})" if index < len(self.journal) else f"entry {index}"
        self._add("after-entry", f"after {label}", gate=gate)

    def _in_group(self, i: int, event: StepEvent, group: _Group) -> None:
        """Inside a parallel group: keep counting, but its only moments are the group's own: before any of
        its steps starts (their commands journaled), and all of them in flight."""
        if i == group.first and group.steps:
            self._after_entry(",".join(self._gate("step", n, "before") for n in group.steps))
        if event.event in self.counts:
            self.counts[event.event] += 1
        if event.event == "op" and event.by:
            pass  # a callee's entries are its own journal's
        elif event.event == "op" and event.kind in ("call", "send"):
            self.entries += 1
            self.calls_out += 1
        elif event.event == "op":
            if event.kind != "sleep":
                self.entries += _ENTRIES.get(event.kind, 1)
            else:
                self.entries += 1
                if self._waited_out():
                    self.pauses.add(event.n)
                    self.entries += 1
        elif event.event == "step_end" and not event.by:
            self.last_step = event.name
            self.entries += 1
        if i != group.last:
            return
        named = together(group.model_calls, [name for _, name in group.quiet_steps])
        inside = f" in {', '.join(group.handlers)}" if group.handlers else ""
        self.found.append(
            CrashPoint(
                f"in flight: {named} together{inside}",
                len(self.found) + 1,
                "in-flight-parallel",
                self.group_entries,
                gate=",".join(self._gate("step", n, "inside") for n, _ in group.quiet_steps) or None,
                model_holds=self._named("model", group.model_calls),
                begins=event.at,
                held_waits=self._named("op", self.waits_open),
            )
        )
        if group.answers_unjournaled:
            self._add(
                "model-returned",
                f"after {named} returned (not journaled){inside}",
                gate=",".join(self._gate("model", n, "after") for n in group.model_calls),
            )
        self.group = None

    def _model_start(self, event: StepEvent) -> None:
        if self.in_step is None:
            self._after_entry(self._gate("model", event.n, "before"))
        self.counts["model_start"] += 1
        self.begins = event.at
        if event.n in self.joined:
            return  # in flight together with an earlier call of its step: that call's moment
        calls = self.together.get(event.n) or (event.n,)
        held = self._named("model", calls)
        if len(calls) > 1:
            self._add("in-flight-parallel", f"in flight: {together(calls, [])} together", model_holds=held)
        else:
            self._add("in-flight-model", f"in flight: model call {event.n}", model_holds=held)

    def _model_end(self, event: StepEvent) -> None:
        self.counts["model_end"] += 1
        self.begins = event.at
        if self.in_step is None:
            name = f"after model call {event.n} returned (not journaled)"
            self._add("model-returned", name, gate=self._gate("model", event.n, "after"))

    def _waited_out(self) -> bool:
        """Did the handler wait for the sleep whose command was just counted? A sleep awaited alone is a
        pause: its completion is the next entry. A timer raced against other work (`restate.select` with a
        timeout) is not: the work goes on at once, and a timer that lost gets no completion before it."""
        following = self.journal[self.entries] if self.entries < len(self.journal) else None
        return following is None or following.startswith("Notification: Sleep")

    def _op(self, i: int, event: StepEvent) -> None:
        if event.by:
            self._callee_op(i, event)
            return
        # A pause waited out, or a call waited on the server: what follows is a moment of its own. A timer
        # raced against other work is no pause.
        before = self.events[i - 1] if i > 0 else None
        # Calls made one after another without an await between them (`restate.gather` of calls) reach
        # the journal together too: holding the handler between them would wait for a command never sent.
        follows_op = (
            before is not None
            and before.event == "op"
            and not before.by
            and (before.kind != "call" or event.kind in ("call", "send"))
            and before.n not in self.pauses
            and before.n not in self.lazy_reads
        )
        if not follows_op:
            self._after_entry(self._gate("op", event.n, "before"))
        if event.kind in WAIT_KINDS:
            self._wait_op(event)
            return
        if event.kind in COMPLETE_KINDS:
            self._completes(event)
            return
        if event.kind in STATE_OPS and self._lazy_read():
            # Lazy state (or a key the invocation did not bring): the read asks the server, which journals
            # its command and its completion before the handler goes on.
            self.entries += self.unsent + 2
            self.unsent = 0
            self.lazy_reads.add(event.n)
            return
        if event.kind in STATE_OPS:
            # Answered at once (a Virtual Object's state comes with the invocation), so nothing is sent:
            # its command reaches the journal with the next operation's.
            self.unsent += 1
            return
        self._flush()
        self.entries += 1  # its command
        if event.kind in ("call", "send"):
            # Its invocation id (and a call's result) come back while the callee runs, or at once.
            self.calls_out += 1
        if event.kind == "sleep" and self.raced is not None and _is_resolution(self._following()):
            # The approval won the race against this timer: waiting for it is the moment.
            raced = f"waiting for the {self.raced.kind} (raced against a timer)"
            self._waiting(event, raced, wait=self.raced)
            self.raced = None
        elif event.kind == "sleep" and self._waited_out():
            self.pauses.add(event.n)
            after = f" after {self.last_step}" if self.last_step else ""
            self.begins = event.at
            op = self._named("op", [event.n])[0]
            self._add("pause", f"in pause{after}", pause_op=op, gate=self._gate("op", event.n, "pause"))
            self.entries += 1  # the handler went on, so the pause's completion is journaled

    def _flush(self) -> None:
        """The commands not sent yet reach the journal with the next one sent; the signals of the
        awakeables the handler resolved itself (and awaited) follow them."""
        self.entries += self.unsent
        self.unsent = 0
        while self.own_signals and _is_resolution(self._following()):
            self.entries += 1
            self.own_signals -= 1

    def _completes(self, event: StepEvent) -> None:
        """The handler resolves or rejects an awakeable (one command, sent with the next) or a promise (its
        command and completion, awaited): a wait of its own it never waits for, nor the sweep resolves."""
        made = self.waits_made.get(event.name)
        if made is not None:
            self.waits_open.discard(made)
        if self.raced is not None and self.raced.name == event.name:
            self.raced = None
        if event.kind == "complete_awakeable":
            self.unsent += 1
            self.own_signals += 1 if made is not None else 0
            return
        self._flush()
        self.entries += 2
        self.lazy_reads.add(event.n)  # the handler waited for the server's answer
        self.own_promises.add(event.name)

    def _lazy_read(self) -> bool:
        """Is the state operation just made a read the server answers (GetLazyState, GetLazyStateKeys),
        as the clean journal's entry after the commands not sent yet says?"""
        at = self.entries + self.unsent
        return at < len(self.journal) and self.journal[at].startswith(_LAZY_READS)

    def _callee_op(self, i: int, event: StepEvent) -> None:
        """A callee's operation: a moment before it (its invocation's journal is its own, so none of the
        swept handler's entries change; a callee's sleeps and waits are no moments of their own)."""
        before = self.events[i - 1] if i > 0 else None
        chained = before is not None and before.event == "op" and before.by == event.by
        if not chained or before is None or before.kind == "call":
            self._after_entry(self._gate("op", event.n, "before"))

    def _following(self) -> str | None:
        """The journal's entry after those counted so far (None past its end)."""
        return self.journal[self.entries] if self.entries < len(self.journal) else None

    def _wait_op(self, event: StepEvent) -> None:
        """An awakeable (no entry of its own: a signal of the invocation) or a promise (its GetPromise
        command). Awaited alone, the moment the handler waits for it is a point; its resolution is the next
        entry. Raced against a timer, the moment is the timer's."""
        if event.kind == "promise" and event.name in self.own_promises:
            # Completed by the handler itself: the server answers at once, and the handler goes on.
            self._flush()
            self.entries += 2
            self.lazy_reads.add(event.n)
            return
        self.entries += self.unsent + (1 if event.kind == "promise" else 0)
        self.unsent = 0
        self.waits_open.add(event.n)
        self.waits_made[event.name] = event.n
        following = self._following()
        if following is None or _is_resolution(following):
            self._waiting(event, f"waiting for the {event.kind}")
        else:
            self.raced = event

    def _awaited_later(self, i: int, event: StepEvent) -> None:
        """An awakeable or promise made before other work (a step sending its id out, as Restate's examples
        write it) and awaited after it: once the journal's next entry is its resolution, the handler waits
        for it from this event on."""
        if self.raced is not None and self.in_step is None and _is_resolution(self._following()):
            self._waiting(self.raced, f"waiting for the {self.raced.kind}", at=event.at)
            self.raced = None
            self.awaited_after.add(i)

    def _waiting(
        self, event: StepEvent, name: str, *, at: float | None = None, wait: StepEvent | None = None
    ) -> None:
        """The moment the handler waits for `wait` (the awakeable or promise `event` is, by default)."""
        self.pauses.add(event.n)
        self.begins = event.at if at is None else at
        self._add("waiting", name, pause_op=self._named("op", [event.n])[0])
        self.waits_open.discard((wait or event).n)
        self.entries += 1  # the handler went on: the resolution is journaled

    def _step_start(self, i: int, event: StepEvent) -> None:
        self.in_step = event
        self._after_entry(self._gate("step", event.n, "before"))
        self.counts["step_start"] += 1
        self.begins = event.at
        if event.n in self.step_has_model:
            return  # held at the stub inside it: the model call's own point
        end = next((e.at for e in self.events[i:] if e.event == "step_end" and e.n == event.n), float("inf"))
        tool = [k for k, at in enumerate(self.tool_starts, start=1) if event.at <= at <= end]
        name = f"in flight: step {event.name}"
        if tool:
            self._add("in-flight-step", name, tool_hold=tool[0])
        else:
            self._add("in-flight-step", name, gate=self._gate("step", event.n, "inside"))


def _action(event: StepEvent) -> str:
    """What a callee's moment comes before, in words: "model call 3", "step plan", "call Worker/write"."""
    if event.event == "model_start":
        return f"model call {event.n}"
    if event.event == "step_start":
        return f"step {event.name}"
    return f"{event.kind} {event.name}".strip()


def _is_resolution(label: str | None) -> bool:
    """A journal entry that resolves an awakeable (a signal) or a promise."""
    resolves = label is not None and label.startswith("Notification")
    return resolves and ("Signal" in str(label) or "Promise" in str(label))


def with_cover(
    points: list[CrashPoint], ended: float, stub_waits: Sequence[tuple[float, float]] = ()
) -> list[CrashPoint]:
    """The points with the share of the clean run's time each covers: from its moment to the next one's,
    less the `stub_waits` (spans the stub held a ready answer back for its own reasons, not the agent's)."""
    if not points:
        return points
    # The agent's log and the server's append times are read from two processes: a millisecond's
    # disorder between them must not make a share negative or the shares add up past the whole.
    ends = [p.begins for p in points[1:]] + [max(ended, points[-1].begins)]
    widths = [
        max(0.0, end - p.begins - _overlap(p.begins, end, stub_waits))
        for p, end in zip(points, ends, strict=True)
    ]
    span = sum(widths)
    if span <= 0:
        return points
    return [dataclasses.replace(p, covers=width / span) for p, width in zip(points, widths, strict=True)]


def _overlap(start: float, end: float, spans: Sequence[tuple[float, float]]) -> float:
    """How much of [start, end] the spans cover (parallel calls' spans overlap: counted once)."""
    covered, reached = 0.0, start
    for a, b in sorted(spans):
        a, b = max(a, reached), min(b, end)
        if b > a:
            covered += b - a
            reached = b
    return covered
