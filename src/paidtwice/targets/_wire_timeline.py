"""A command's clean run and the crash points in it, from what any language shows from outside its process.

A deployment started by a command (`paidtwice.agent._command`) has no host to log its steps. Its timeline is
read instead from the frames the protocol proxy saw (each attempt's start and each completion the server
sent: a moment the agent waits, which the proxy can hold), the stub's ledgers (model and tool calls, held in
flight) and the journal (durable pauses). Nothing here talks to a server.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

from paidtwice.agent import WireStep, read_wire
from paidtwice.engine import JournalEntry, epoch
from paidtwice.results import CrashPoint
from paidtwice.stub import ModelCall, ToolRun, answer_marks
from paidtwice.targets._timeline import Span, one_moment, together, with_cover

__all__ = ["place_call", "wire_model_calls_in_steps", "wire_points"]

_Moment = tuple[float, CrashPoint]
"""A crash point (not numbered yet) and when its moment began in the clean run."""


def wire_points(
    *,
    journal: Sequence[JournalEntry],
    wire_log: Path,
    invocation_id: str,
    steps: Sequence[WireStep],
    calls: Sequence[ModelCall],
    tools: Sequence[ToolRun],
) -> list[CrashPoint]:
    """The crash points of a command's clean run, in time order: one after each journal entry the proxy can
    hold, one in flight inside each model call and each step that calls a tool, one in each durable pause.

    A model answer that came back but is not journaled yet cannot be held from outside the process (the agent
    goes on at once): that moment is not a point here, and its time counts to the call's in-flight point,
    whose crash costs the same. Each point covers the clean run's time from its moment to the next one."""
    wire = _Wire(wire_log, invocation_id, steps)
    labels = [e.label() for e in journal]
    planned = [
        *_frame_moments(wire, labels),
        *_answer_moments(wire, labels, calls),
        *_model_moments(wire, calls),
        *_tool_moments(wire, tools),
        *_pause_moments(wire, journal),
    ]
    moments = [moment for m in planned if (moment := _with_own_signals(wire, labels, m)) is not None]
    moments.sort(key=lambda m: m[0])
    points = [
        dataclasses.replace(point, order=order, begins=at)
        for order, (at, point) in enumerate(moments, start=1)
    ]
    # Each moment lasts until the next one begins, the last until the server journaled the output.
    appended = [epoch(entry.appended_at) or 0.0 for entry in journal]
    output = [at for entry, at in zip(journal, appended, strict=True) if entry.type == "Command: Output"]
    # The stub's wait for the proxy to catch up before it answers (`Lane.settle`) is no time of the agent's.
    waits = [(c.settling, c.replied) for c in calls if c.settling is not None and c.replied is not None]
    return with_cover(points, output[0] if output else max(appended, default=0.0), waits)


def wire_model_calls_in_steps(
    steps: Sequence[WireStep], calls: Sequence[ModelCall]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The model calls (their numbers) the wire proves were made inside a step (`place_call`): their answers
    are the step's result, so they are journaled; and those it cannot place either way, counted as made
    outside every step (a kill after their answers pays for them again unless the wire proves otherwise)."""
    places = [(call.call, place_call(call, steps)) for call in calls]
    return (
        tuple(n for n, (step, proven) in places if step is not None and proven),
        tuple(n for n, (_, proven) in places if not proven),
    )


def place_call(call: ModelCall, steps: Sequence[WireStep]) -> tuple[WireStep | None, bool]:
    """The step a model call was made in (None: outside every step), and whether the wire proves it.

    Made in a step, proven: the step had begun when the answer came back (its RunCommand passed the proxy
    before the stub began to answer: the stub first waits for the agent to go quiet and lets the proxy
    read every frame it had sent, and the SDKs send a step's command before its action runs) and its
    result, proposed after, carries the answer (`answer_marks`). Outside, proven: no step ran while it was
    answered and no later result carries it. Anything else is not proven: a call answered while a step ran
    whose result does not carry it (that step, e.g. one that keeps only part of the answer, or a call made
    beside it), or a call answered before every step that carries it (an answer a later step keeps, or an
    SDK that sends the command only with its result)."""
    replied = call.replied if call.replied is not None else call.finished
    if replied is None:
        return None, False
    # A result proposed after the answer began to go out may hold it: the stub stamps `finished` only once it
    # has sent the answer, and a loaded lab stamps it after the agent had already proposed the step's result.
    running = [s for s in steps if s.commanded <= replied and (s.proposed is None or s.proposed >= replied)]
    holding = [s for s in running if _carries(s, call)]
    if holding:
        return holding[0], True
    if running:
        return running[0], False
    later = [s for s in steps if s.proposed is not None and s.proposed >= replied and _carries(s, call)]
    return None, not later


def _carries(step: WireStep, call: ModelCall) -> bool:
    """The step's result holds the call's answer: one of its marks, as written or escaped in JSON."""
    for mark in answer_marks(call):
        forms = {mark, json.dumps(mark)[1:-1], json.dumps(mark, ensure_ascii=False)[1:-1]}
        forms |= {json.dumps(form)[1:-1] for form in list(forms)}  # a JSON string inside JSON
        if any(form in step.value for form in forms):
            return True
    return False


def _step_of(call: ModelCall, steps: Sequence[WireStep]) -> WireStep | None:
    """The step a model call was made in, as far as the journal's size at a moment goes: the step that ran
    while it was answered (`place_call`), proven or not, since its RunCommand is in the journal either
    way."""
    return place_call(call, steps)[0]


class _Wire:
    """What the proxy saw of one invocation: its log lines, the journal's size at each frame, its steps."""

    def __init__(self, wire_log: Path, invocation_id: str, steps: Sequence[WireStep]) -> None:
        self.records = read_wire(wire_log, invocation_id)
        self.marks = [
            (float(r["at"]), int(r.get("entries", r.get("known", 0))))
            for r in self.records
            if r["event"] in ("start", "notification", "command")
        ]
        """(time, entries): the journal's size as each frame passed the proxy."""
        self.sent: dict[int, float] = {}
        """When the command that made the journal this many entries long passed the proxy."""
        self.commands: list[tuple[float, int]] = []
        """(time, entries): each command as it passed the proxy, and the journal's size with it."""
        for record in self.records:
            if record["event"] == "command":
                self.sent.setdefault(int(record["entries"]), float(record["at"]))
                self.commands.append((float(record["at"]), int(record["entries"])))
        self.steps = steps
        self.attempts = {int(r["attempt"]) for r in self.records}
        """The proxy's numbers of the invocation's own attempts (a callee's steps are in other attempts)."""
        self.frames = [float(r["at"]) for r in self.records if r["event"] in ("start", "notification")]
        """When each frame the server sent (an attempt's start, a completion) passed the proxy."""
        signals = {
            int(r["signal"]): int(r["entries"])
            for r in self.records
            if r["event"] == "notification" and "signal" in r
        }
        self.own_signals = sorted(
            (int(r["entries"]), signals[int(r["signal"])])
            for r in self.records
            if r["event"] == "completes" and int(r["signal"]) in signals
        )
        """(entries with the command, entries with the signal) of each awakeable the handler completed
        itself: the server appends its signal whatever the proxy holds back from the agent."""

    def owed(self, n: int) -> int:
        """The journal's size once the server appended the signals it owes the journal's first `n` entries:
        those of the awakeables the handler completed itself by then whose signals come later."""
        for command, signal in self.own_signals:
            if command <= n < signal:
                n = signal
        return n

    def batch(self, step: WireStep) -> int:
        """The server frames (the attempt's start, completions) that had passed the proxy before the step's
        RunCommand: steps the handler started together send their commands between the same two frames."""
        return sum(1 for at in self.frames if at <= step.commanded)

    def batch_of(self, call: ModelCall, calls: Sequence[ModelCall] = ()) -> int | None:
        """The await that started the steps a model call may have been made in (`batch`), when that await
        started two steps or more; None for a call in no step, when its possible steps differ, or when the
        await started one step (then only its span in flight tells).

        The proxy stamps the agent's frames when it reads them, the stub a call's end once its answer is
        sent: under load either can come late, by more than a quick call lasts. So the steps a call may be
        in are read from what cannot come out of order: a step whose result passed after the call began
        (the agent proposes only once the stub has answered, and the stub stamps the start before it
        answers), begun before it (its RunCommand stamped first) or, should the proxy have read that
        command late, begun by the await the call came after (the frames the proxy stamped before passing
        them on, then before the call began). A batch holds at most as many calls as it has steps: with more
        (a call made just before the steps began), the earliest are not counted in it."""
        batch = self._batch_of(call)
        if batch is None:
            return None
        every = {c.call: c for c in (*calls, call)}.values()
        mine = sorted((c for c in every if self._batch_of(c) == batch), key=lambda c: c.started)
        size = sum(1 for s in self.steps if self.batch(s) == batch)
        kept = {c.call for c in mine[len(mine) - size :]} if len(mine) > size else {c.call for c in mine}
        return batch if call.call in kept else None

    def _batch_of(self, call: ModelCall) -> int | None:
        before = sum(1 for at in self.frames if at <= call.started)
        around = [
            s
            for s in self.steps
            if (s.proposed is None or s.proposed > call.started)
            and (s.commanded <= call.started or self.batch(s) <= before)
        ]
        batches = {self.batch(s) for s in around}
        if len(batches) != 1:
            return None
        (batch,) = batches
        return batch if sum(1 for s in self.steps if self.batch(s) == batch) >= 2 else None

    def entries_held(
        self, held: Sequence[ModelCall], in_steps: Sequence[WireStep], together: Sequence[WireStep]
    ) -> int:
        """Entries the journal holds while every call of a moment is held in flight at the stub, counted on
        the wire (the server's append times race with a fast call). `in_steps`: the steps the calls are
        made in; `together`: every step of the await that started them, those too.

        Every entry that passed the proxy before the last of the calls began, unless one of them had been
        answered (or one of their steps had sent its result) by then: what passed after that came of an
        answer a held run never gets (that step's result, the completion the server sent for it); in the
        clean run a call may begin only after its sibling's step was journaled. And the RunCommands of the
        steps that passed the proxy later, with every command the agent sent before them: the agent sends
        those whatever the answers, but an SDK may send them after the steps' actions began, and the proxy
        may read them late (the TypeScript SDK sends a state read and the step's command in one write)."""
        ends = [c.finished for c in held if c.finished is not None]
        results = [s.proposed for s in in_steps if s.proposed is not None]
        cut = min([max(c.started for c in held), *ends, *results])
        n = max([1, *(entries for at, entries in self.marks if at <= cut)])
        steps = [s for s in dict.fromkeys([*in_steps, *together]) if self.command_of(s) > n]
        own = [s.commanded for s in steps if s.attempt in self.attempts]
        # Only commands: a notification read after the cut may have come of an answer the held run lacks.
        late = sum(1 for at, _ in self.commands if cut < at <= max(own) + 1e-6) if own else 0
        return n + late + sum(1 for s in steps if s.attempt not in self.attempts)

    def command_of(self, step: WireStep) -> int:
        """The journal's size with the step's RunCommand (the command the proxy logged just before it)."""
        return max([0, *(entries for at, entries in self.commands if at <= step.commanded + 1e-6)])

    def entries_at(self, t: float, step: WireStep | None = None) -> int:
        """Entries the journal holds while a call that started at `t` is in flight, counted on the wire (the
        server's append times race with a fast call): every entry that passed the proxy before it, and the
        RunCommand of the step it is made in (by default the step whose RunCommand came before it)."""
        n = max([1, *(entries for at, entries in self.marks if at <= t)])
        for other in self.steps:
            if other is step or (step is None and other.commanded <= t <= (other.proposed or float("inf"))):
                n = max(n, *(entries for at, entries in self.marks if at <= other.commanded + 1e-6))
        return n


def _with_own_signals(wire: _Wire, labels: Sequence[str], moment: _Moment) -> _Moment | None:
    """The moment, with the journal it holds once the signals of the awakeables the handler completed
    itself come (`_Wire.owed`): a call or step held in flight, or a pause the handler still waits in,
    holds them too. None for a moment that holds the journal exactly where such a signal is still to come
    (a frame, or the agent's next command, held back: the server appends it anyway), and for a timer the
    handler does not wait out once they came (raced against them: the handler goes on)."""
    at, point = moment
    n = wire.owed(point.journal_entries)
    if n == point.journal_entries:
        return moment
    waits = point.kind == "pause" and n < len(labels) and labels[n].startswith("Notification")
    if point.kind.startswith("in-flight") or waits:
        return at, dataclasses.replace(point, journal_entries=n)
    return None


def _call_outstanding(labels: Sequence[str], n: int) -> bool:
    """Whether the moment after the journal's first `n` entries races with a callee: a call is without its
    result, or a call's invocation id is the next entry (the server appends those while the caller is
    held: the callee runs on, in another attempt), or the n-th entry is the result of one of calls made at
    once (what the caller does after the first result races with the others'). The journal may have grown
    by the kill, or grown another way."""
    open_calls = most = 0
    for label in labels[:n]:
        if label.startswith("Command: Call"):
            open_calls += 1
            most = max(most, open_calls)
        elif label == "Notification: Call":
            open_calls -= 1
    if open_calls > 0 or (n < len(labels) and labels[n] == "Notification: CallInvocationId"):
        return True
    return most > 1 and labels[n - 1] == "Notification: Call"


def _results_on_the_way(wire: _Wire, labels: Sequence[str], n: int, at: float) -> bool:
    """Whether the agent had proposed more step results when the frame bringing the journal to `n` entries
    passed the proxy than the journal's first `n` entries hold: the server journals those whatever the proxy
    holds back from the agent (parallel steps answered at once), so the journal cannot be held at `n`."""
    proposed = sum(1 for step in wire.steps if step.proposed is not None and step.proposed <= at)
    return proposed > sum(1 for label in labels[:n] if label == "Notification: Run")


def _frame_moments(wire: _Wire, labels: Sequence[str]) -> list[_Moment]:
    """After each entry an attempt started with, or a completion brought: the proxy holds that frame."""
    moments: list[_Moment] = []
    held: set[int] = set()
    for record in wire.records:
        if record["event"] == "start":
            n = int(record["known"])
        elif record["event"] == "notification":
            n = int(record["entries"])
        else:
            continue
        if _call_outstanding(labels, n) or (0 < n <= len(labels) and labels[n - 1] == "Command: Output"):
            continue  # a callee may move the journal on; after the output there is no moment left
        if record["event"] == "notification" and _results_on_the_way(wire, labels, n, float(record["at"])):
            continue
        if n not in held:
            held.add(n)
            name = f"after entry {n - 1} ({labels[n - 1]})" if n - 1 < len(labels) else f"after entry {n - 1}"
            moments.append((float(record["at"]), CrashPoint(name, 0, "after-entry", n, hold_entries=n)))
    return moments


_RUN = "Command: Run"


def _answer_moments(wire: _Wire, labels: Sequence[str], calls: Sequence[ModelCall]) -> list[_Moment]:
    """After each model answer the wire proves was made outside every step, where the agent's next frame is
    a command (its state, a call, its output; not a step's, whose action runs as it is sent) and no other
    model call began before it: the proxy holds that command back (the point's `hold_entries`, the agent's
    frames only), so the kill lands with the answer back and not journaled, as the host's gate
    `model:N:after` does. An answer only commands follow has no other moment: a kill in flight is a call
    cut off, and after the output there is none.

    Not in a tree: a command's lane does not say which invocation of it made a call."""
    if any(r["event"] in ("call", "callee") for r in wire.records):
        return []
    frames = [r for r in wire.records if r["event"] in ("start", "notification", "command")]
    moments: list[_Moment] = []
    for call in calls:
        replied = call.replied if call.replied is not None else call.finished
        if not call.delivered or replied is None or place_call(call, wire.steps) != (None, True):
            continue
        n = max([0, *(entries for at, entries in wire.marks if at <= replied)])
        after = [r for r in frames if float(r["at"]) > replied]
        if not after or after[0]["event"] != "command" or int(after[0]["entries"]) != n + 1:
            continue
        if n == 0 or n >= len(labels) or not labels[n].startswith("Command") or labels[n].startswith(_RUN):
            continue  # a step's action runs as its command is sent, held or not: the step's own moments
        if any(replied < other.started < float(after[0]["at"]) for other in calls):
            continue  # the agent asked again before its next entry: that call's moments hold it
        name = f"after model call {call.call} returned (not journaled)"
        moments.append((replied, CrashPoint(name, 0, "model-returned", n, hold_entries=n)))
    return moments


def _model_moments(wire: _Wire, calls: Sequence[ModelCall]) -> list[_Moment]:
    """In flight inside each model call, the stub holding it; calls in flight at once in the clean run (in
    steps gathered together, or plain calls under `asyncio.gather`) are one moment, every one of them held,
    as on the in-process path (`one_moment`): holding one alone lets its siblings' answers come back into the
    kill, a moment no run repeats."""
    batches = [wire.batch_of(c, calls) for c in calls]
    spans = [
        Span(c.started, c.finished if c.finished is not None else float("inf"), batch)
        for c, batch in zip(calls, batches, strict=True)
    ]
    moments: list[_Moment] = []
    for run in one_moment(spans):
        held = [calls[k] for k in run]
        in_steps, together_steps = _steps_of_moment(wire, held, [batches[k] for k in run])
        entries = wire.entries_held(held, in_steps, together_steps)
        numbers = tuple(sorted(c.call for c in held))
        if len(held) == 1:
            point = CrashPoint(f"in flight: model call {numbers[0]}", 0, "in-flight-model", entries)
        else:
            point = CrashPoint(
                f"in flight: {together(numbers, [])} together", 0, "in-flight-parallel", entries
            )
        names = tuple(c.name for c in sorted(held, key=lambda c: c.call))
        moments.append((min(c.started for c in held), dataclasses.replace(point, model_holds=names)))
    return moments


def _steps_of_moment(
    wire: _Wire, held: Sequence[ModelCall], batches: Sequence[int | None]
) -> tuple[list[WireStep], list[WireStep]]:
    """The steps the held calls are made in (`_step_of`), and, for calls one await started (one batch),
    every step of that await: their RunCommands are sent together, whichever steps the calls are in."""
    in_steps = [step for c in held if (step := _step_of(c, wire.steps)) is not None]
    together: list[WireStep] = []
    if len(held) > 1 and len(set(batches)) == 1 and batches[0] is not None:
        together = [s for s in wire.steps if wire.batch(s) == batches[0]]
    return in_steps, together


def _tool_moments(wire: _Wire, tools: Sequence[ToolRun]) -> list[_Moment]:
    """In flight inside each step that calls a tool: the stub holds the tool call."""
    moments: list[_Moment] = []
    for tool in tools:
        # The step whose result had not passed the proxy when the tool was called: an SDK may send a step's
        # RunCommand only with its result (the Python SDK here), so the command's time says little.
        step = next((s for s in wire.steps if (s.proposed or float("inf")) >= tool.started), None)
        if step is None:
            continue  # a tool called outside a step: not a step in flight
        entries = wire.entries_at(tool.started, step)
        point = CrashPoint(f"in flight: step {step.name}", 0, "in-flight-step", entries, tool_hold=tool.call)
        moments.append((tool.started, point))
    return moments


def _pause_moments(wire: _Wire, journal: Sequence[JournalEntry]) -> list[_Moment]:
    """In each durable pause, from when its Sleep command passed the proxy: on the proxy's clock, as the
    moments around it are (the server's append time can come before the proxy logged the frame before it)."""
    moments: list[_Moment] = []
    for i, entry in enumerate(journal):
        if entry.label().startswith("Command: Sleep"):
            appended = wire.sent.get(i + 1, epoch(entry.appended_at) or 0.0)
            before = [s.name for s in wire.steps if s.proposed is not None and s.proposed <= appended]
            name = "in pause" + (f" after {before[-1]}" if before else "")
            moments.append((appended, CrashPoint(name, 0, "pause", i + 1)))
    return moments
