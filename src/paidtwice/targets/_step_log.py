"""The host's step log, read: one `StepEvent` per line of one invocation (or tree), and what the lines say
without planning anything (the steps run, the model calls made inside steps, the handlers under
`explicit_recovery`). The crash points planned from it are `_timeline`'s.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["StepEvent", "explicit_handlers", "model_calls_in_steps", "read_step_log", "step_runs"]


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
