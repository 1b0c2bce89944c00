"""The host's step log, read: one `StepEvent` per line of one invocation (or tree), and what the lines say
without planning anything (the steps run, the model calls made inside steps, the handlers under
`explicit_recovery`). The crash points planned from it are `_timeline`'s.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "StepEvent",
    "called_together",
    "explicit_handlers",
    "gate_name",
    "gate_names",
    "model_calls_in_steps",
    "read_step_log",
    "step_runs",
]


@dataclass(frozen=True)
class StepEvent:
    """One line of the host's step log."""

    event: str
    """What happened: "model_start", "model_end", "op", "step_start", "step_end" or "gate"."""
    n: int
    """The model call's, operation's or step's number within the invocation."""
    name: str
    """A step's or an operation's name; a gate line's gate."""
    kind: str
    """An operation's kind ("run", "sleep", "call", "send", or one of `STATE_OPS`)."""
    at: float
    """Wall-clock time it happened."""
    step: int = 0
    """For a model request: the executed step it was made in (0: none)."""
    by: str = ""
    """In a tree of invocations (`paidtwice.agent._tree`): the callee's invocation that did it; "" for the
    swept invocation itself (the root)."""
    handler: str = ""
    """The callee's SERVICE/HANDLER, as the user's code names it ("" for the root)."""
    follows: bool = True
    """For a call or a send: the host followed it into the tree (a service of the app)."""
    pos: int = 0
    """An operation's position in its attempt (for a step execution, its `run`'s), the same in every
    attempt that replays the same code: a step run again where one ran before has the same (`by`, `pos`,
    `name`); 0 where the host did not say."""
    sent: bool = False
    """A callee's line: a send started it (its caller goes on without waiting for it)."""
    place: str = ""
    """A callee's line: its place in the tree (`paidtwice.agent._tree`), which its gates are named by."""


def read_step_log(step_log: Path, invocation_id: str) -> list[StepEvent]:
    """One invocation's events from a host's step log, in order (none if the log does not exist yet)."""
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
                StepEvent(
                    str(raw["event"]),
                    int(raw.get("n", 0)),
                    str(raw.get("name", raw.get("gate", ""))),
                    str(raw.get("kind", "")),
                    float(raw["at"]),
                    int(raw.get("step", 0)),
                    str(raw.get("by", "")),
                    str(raw.get("handler", "")),
                    bool(raw.get("follows", True)),
                    int(raw.get("pos", 0)),
                    bool(raw.get("sent", False)),
                    str(raw.get("place", "")),
                )
            )
    return events


def explicit_handlers(step_log: Path) -> frozenset[str]:
    """SERVICE/HANDLER of the handlers the host found under `explicit_recovery` (its line for the whole
    app, `invocation` "*"); empty when the log has none (no host, or none of its handlers is)."""
    try:
        lines = step_log.read_text().splitlines()
    except FileNotFoundError:
        return frozenset()
    found: set[str] = set()
    for line in lines:
        try:
            raw = json.loads(line)
        except ValueError:
            continue
        if raw.get("invocation") == "*" and raw.get("event") == "explicit_recovery":
            found.update(str(h) for h in raw.get("handlers", []))
    return frozenset(found)


def step_runs(events: Sequence[StepEvent]) -> tuple[tuple[str, int], ...]:
    """Executions of each step, by name, sorted by name."""
    counts: dict[str, int] = {}
    for event in events:
        if event.event == "step_start":
            counts[event.name] = counts.get(event.name, 0) + 1
    return tuple(sorted(counts.items()))


def model_calls_in_steps(events: Sequence[StepEvent]) -> tuple[int, ...]:
    """The model requests (their numbers) made while a ctx.run step was executing: their answers are the
    step's result."""
    inside: list[int] = []
    open_steps: set[int] = set()
    for event in events:
        if event.event == "step_start":
            open_steps.add(event.n)
        elif event.event == "step_end":
            open_steps.discard(event.n)
        elif event.event == "model_start" and (event.step or open_steps):
            inside.append(event.n)
    return tuple(inside)


_GATED = {"op": "op", "step_start": "step", "model_start": "model"}
"""The events the host counts for its gates, and the kind of gate each is."""


def gate_name(place: str, kind: str, count: int) -> str:
    """A gate's name without the moment, as the host names it (`StepLog.next`): the `count`-th `kind` of the
    invocation, after a callee's place in the tree (`model:2`, `7/op:1`)."""
    return f"{place}/{kind}:{count}" if place else f"{kind}:{count}"


def gate_names(events: Sequence[StepEvent]) -> dict[tuple[str, int], str]:
    """(kind, n) of each operation, step and model call -> the name of its gates without the moment, as
    the host names them (`gate_name`): N the count of its own invocation's. A callee's moment is its own
    whichever order the tree's callees ran in. A restarted agent numbers its lines anew: the first life's
    names stand."""
    counts: dict[tuple[str, str], int] = {}
    names: dict[tuple[str, int], str] = {}
    for event in events:
        kind = _GATED.get(event.event)
        if kind is None:
            continue
        own = counts[(event.by, kind)] = counts.get((event.by, kind), 0) + 1
        names.setdefault((kind, event.n), gate_name(event.place, kind, own))
    return names


def called_together(events: Sequence[StepEvent]) -> dict[int, tuple[str, ...]]:
    """At a called callee's first event (its index in the log): the first gates of the callees already
    called then that had not begun yet (`restate.gather` of calls). Held with it, their results cannot reach
    their caller's journal before the kill, as in the clean run; a callee of a send adds nothing to it, and
    is left to run."""
    names = gate_names(events)
    by_place = {e.place: e.by for e in events if e.by}
    calls: dict[tuple[str, int], int] = {}  # (caller, position of its call) -> the call's index
    first: dict[str, int] = {}
    for i, event in enumerate(events):
        if event.by and event.by not in first:
            first[event.by] = i
        if event.event == "op" and event.kind in ("call", "send"):
            calls.setdefault((event.by, event.pos), i)

    def called_at(place: str) -> int | None:
        caller, _, at = place.rpartition(".")
        return calls.get((by_place.get(caller, ""), int(at))) if at.isdigit() else None

    called = {e.by: called_at(e.place) for e in events if e.by and not e.sent}
    held: dict[int, tuple[str, ...]] = {}
    for callee in called:
        i = first[callee]
        others = [c for c, at in called.items() if at is not None and at < i < first[c]]
        held[i] = tuple(g for g in (_first_gate(events[first[c]], names) for c in others) if g)
    return held


def _first_gate(event: StepEvent, names: dict[tuple[str, int], str]) -> str:
    """The gate before a callee's first event ("" if the host has none there)."""
    kind = _GATED.get(event.event)
    name = names.get((kind, event.n)) if kind is not None else None
    return f"{name}:before" if name else ""
