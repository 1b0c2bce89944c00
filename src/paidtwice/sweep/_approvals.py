"""What a handler waits for from a person (human in the loop), and how a sweep answers it.

The host logs each `ctx.awakeable()` and each Workflow's `ctx.promise(NAME).value()` as a context operation
(with the type's JSON schema, and the shared handler that resolves a promise). A `Resolver` watches one
invocation's step log and answers each wait `Resolution.after` seconds after it began, as a person would:
an awakeable through the ingress, a promise through its shared handler. The value is `--resolve JSON`, else
the script file's `[[awakeable]]` values in order, else one made from the wait's type, the same every run.
A wait nothing answers (`--resolve never`) ends a clean run at once with one line
(`Resolver.waiting_on_nothing`), unless a timer raced against it can still fire.

In a crash point's run, a wait the clean run saw resolved after the point's moment
(`CrashPoint.held_waits`, by name, so a callee's wait is its own whatever order the tree's callees ran in),
or one due while the journal already holds the point's entries, is held back until the agent was killed: a
handler stopped at a gate looks quiet, as one waiting does, so the kill must land on the journal the point
names. Waits before the moment are answered as in the clean run.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paidtwice._exceptions import PaidtwiceError
from paidtwice.engine import IngressClient
from paidtwice.schema import UnsatisfiableSchema, value_for
from paidtwice.stub import Lane
from paidtwice.targets import COMPLETE_KINDS, WAIT_KINDS, Resolution, gate_name

__all__ = ["Resolution", "Resolver", "Wait", "lane_idle", "read_waits"]


def lane_idle(lane: Lane) -> bool:
    """No model call on the lane in flight, and none ended within the last second: a wait read from outside
    the process (`Wait.guess`) is a wait, not a call the wire does not show."""
    now = time.time()
    return all(c.finished is not None and now - c.finished >= 1.0 for c in lane.model_calls())


_QUIET = 1.0
"""A handler that logged nothing for this long since its last wait is waiting on it."""
_POLL = 0.05
_SETTLED = 0.2
"""After the last work a handler did between making a wait and awaiting it: its result journaled by then."""


@dataclass(frozen=True)
class Wait:
    """One awakeable or promise a handler waited on, from the host's step log."""

    n: int
    """Its operation's number within the invocation."""
    kind: str
    """"awakeable" or "promise"."""
    name: str
    """The awakeable's id, or the promise's name."""
    schema: Any
    """JSON schema of its value, when the code names its type; None otherwise."""
    at: float
    """When the handler made it (wall clock)."""
    index: int
    """Its position among the invocation's waits, from 0 (which `[[awakeable]]` value it gets)."""
    guess: bool = False
    """Read from outside the process (a command's quiet attempt), not logged by the code making it: answered
    only while the handler makes no model call."""
    named: str = ""
    """Its operation as the host names its gates (`op:3`; `7/op:1`, a callee's own first, by its place in
    the tree): what a point holds it back by, whatever order the tree's callees ran in."""

    @property
    def label(self) -> str:
        return f"awakeable {self.name}" if self.kind == "awakeable" else f"promise {self.name!r}"


def _lines(step_log: Path) -> list[dict[str, Any]]:
    try:
        text = step_log.read_text()
    except FileNotFoundError:
        return []
    found = []
    for line in text.splitlines():
        try:
            raw = json.loads(line)
        except ValueError:
            continue  # a line cut by the kill
        if isinstance(raw, dict):
            found.append(raw)
    return found


def read_waits(step_log: Path, invocation_id: str) -> list[Wait]:
    """The invocation's waits, in order (one per operation number: a replay logs each again); a wait read
    from outside the process and then seen to be none ("op_void") is left out, and so is one its own tree
    resolves or rejects (a second resolution through the ingress would add a signal the handler never
    asked for to its journal)."""
    waits: dict[int, Wait] = {}
    completed: set[str] = set()
    ops: dict[str, int] = {}  # per invocation of the tree: its operations so far, as the host counts them
    for raw in _lines(step_log):
        if raw.get("invocation") != invocation_id:
            continue
        n = int(raw.get("n", 0))
        if raw.get("event") == "op":
            by = str(raw.get("by", ""))
            ops[by] = ops.get(by, 0) + 1
        if raw.get("event") == "op_void":
            waits.pop(n, None)
        elif raw.get("event") == "op" and raw.get("kind") in COMPLETE_KINDS:
            completed.add(str(raw.get("name", "")))
        elif raw.get("event") == "op" and raw.get("kind") in WAIT_KINDS and n not in waits:
            kind, name, at = str(raw["kind"]), str(raw.get("name", "")), float(raw["at"])
            named = gate_name(str(raw.get("place", "")), "op", ops[str(raw.get("by", ""))])
            waits[n] = Wait(n, kind, name, raw.get("schema"), at, 0, bool(raw.get("guess")), named)
    mine = [w for w in waits.values() if w.name not in completed]
    return [dataclasses.replace(w, index=i) for i, w in enumerate(mine)]


def _waiting_since(wait: Wait, events: list[dict[str, Any]], since: float) -> float | None:
    """When the handler began to wait for `wait`: its last event since making it (or since `since`, the
    agent's restart: each process numbers its steps anew), as work done before awaiting it (a step sending
    its id out) is not waiting, plus a quiet moment so that work's result reaches the journal before the
    resolution does. None while a step or model call it started is open."""
    later = [e for e in events if float(e.get("at", 0.0)) >= max(wait.at, since)]
    opened: dict[tuple[str, int], int] = {}
    for e in later:
        kind = str(e.get("event", ""))
        if kind in ("step_start", "model_start"):
            opened[(kind[:-6], int(e.get("n", 0)))] = 1
        elif kind in ("step_end", "model_end"):
            opened.pop((kind[:-4], int(e.get("n", 0))), None)
    if opened:
        return None
    last = max((float(e.get("at", 0.0)) for e in later), default=wait.at)
    return last + (_SETTLED if last > wait.at else 0.0)


def _due(
    wait: Wait, events: list[dict[str, Any]], since: float, after: float, *, until: float
) -> float | None:
    """When the resolver's schedule first had `wait`'s answer due, before `until` (None: not before): the
    first moment it had waited `after` seconds since it began to wait (`_waiting_since`, as the step log read
    then) and since `since`, as the resolver's loop decides it."""
    at = [float(e.get("at", 0.0)) for e in events]
    t = max(wait.at, since) + after
    while t < until:
        begun = _waiting_since(wait, [e for e, when in zip(events, at, strict=True) if when < t], since)
        if begun is None:  # a step or a call it started was open: the next event may close it
            later = [when for when in at if when >= t]
            if not later:
                return None
            t = min(later) + 1e-6
            continue
        due = max(begun, since) + after
        if due <= t:
            return t
        t = due
    return None


def promise_resolvers(step_log: Path, service: str) -> dict[str, str]:
    """The shared handler of Workflow `service` (the name it is served under) that resolves each promise."""
    for raw in _lines(step_log):
        if raw.get("event") == "promise_resolvers":
            found = raw.get("services", {}).get(service, {})
            return {str(k): str(v) for k, v in found.items()}
    return {}


class Resolver:
    """Answers one invocation's waits from a thread of its own, until `stop`."""

    def __init__(
        self,
        ingress: IngressClient,
        step_log: Path,
        *,
        service: str,
        served_as: str,
        resolution: Resolution,
        key: str | None = None,
        script_values: tuple[str, ...] = (),
        hold_at: int | None = None,
        hold_ops: frozenset[str] = frozenset(),
        journal_length: Callable[[], int] = lambda: 0,
        journal_labels: Callable[[], Sequence[str]] | None = None,
        idle: Callable[[], bool] = lambda: True,
    ) -> None:
        self.ingress = ingress
        self.step_log = step_log
        self.service = service
        self.served_as = served_as
        self.key = key
        self.resolution = resolution
        self.script_values = script_values
        self.hold_at = hold_at
        """A point's journal entries: a wait due once the journal holds them waits until `release`."""
        self.hold_ops = hold_ops
        """The waits a point holds back (the one a waiting point waits on, those its clean run resolved
        after its moment), by name (`Wait.named`): held until `release`, wherever the journal is."""
        self.journal_length = journal_length
        self.journal_labels = journal_labels
        """The invocation's journal, as labels: a wait is answered only once every step the handler ran has
        its result there (None: not checked)."""
        self.idle = idle
        """No model call in flight, nor one just ended: a guessed wait is answered only then."""
        self.invocation_id = ""
        self.resolved: dict[int, float] = {}
        """Each wait answered (by operation number): when."""
        self.sent: dict[int, float] = {}
        """Each wait answered (by operation number): when its answer was sent (`resolved` is when the ingress
        took it, which can be after the handler already went on with it)."""
        self.failure: str | None = None
        self._released_at: float | None = None
        self._holding = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, invocation_id: str) -> None:
        self.invocation_id = invocation_id
        self._thread = threading.Thread(target=self._loop, name=f"resolver-{invocation_id}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10.0)

    def release(self) -> None:
        """The point's kill landed: its held waits are answered from now on (while the agent is down, or
        once it is back)."""
        self._released_at = time.time()

    def waits(self) -> list[Wait]:
        return read_waits(self.step_log, self.invocation_id)

    def value_of(self, wait: Wait) -> tuple[Any, str | None]:
        """The value `wait` is resolved with, or why nothing resolves it."""
        if self.resolution.never:
            return None, "--resolve never resolves nothing"
        if wait.kind == "promise" and wait.name not in promise_resolvers(self.step_log, self.served_as):
            return None, (
                f"no shared handler of {self.service} resolves it "
                f"(ctx.promise({wait.name!r})...resolve(...)), and the sweep resolves a promise through it "
                "(--resolve cannot: a Workflow's promise is resolved only by a handler of the workflow)"
            )
        if self.resolution.value is not None:
            return json.loads(self.resolution.value), None
        if self.script_values:
            return json.loads(self.script_values[min(wait.index, len(self.script_values) - 1)]), None
        if isinstance(wait.schema, dict) and wait.schema:
            try:
                return value_for(wait.schema, seed=f"{wait.kind}:{wait.index}"), None
            except UnsatisfiableSchema as err:
                return None, f"paidtwice cannot make a value of its type ({err}): give one with --resolve"
        return None, (
            "its code names no type, so paidtwice cannot make a value: give one with --resolve JSON or an "
            "[[awakeable]] table (value = ...) in the script file"
        )

    def waiting_on_nothing(self) -> str | None:
        """What the invocation waits for that nothing will resolve, once it sits there: the handler logged
        nothing since for a while, and no timer it set after the wait can end it. None otherwise."""
        if self.failure is not None:
            return self.failure
        events = [r for r in _lines(self.step_log) if r.get("invocation") == self.invocation_id]
        if not events or time.time() - float(events[-1].get("at", 0.0)) < _QUIET:
            return None
        for wait in self.waits():
            if wait.n in self.resolved:
                continue
            _, why = self.value_of(wait)
            later = [e for e in events if e.get("event") == "op" and int(e.get("n", 0)) > wait.n]
            if why is not None and not any(e.get("kind") == "sleep" for e in later):
                return f"{wait.label} (operation {wait.n} of the handler), and nothing resolves it: {why}"
        return None

    @property
    def released_at(self) -> float | None:
        """When the point's kill released the held waits (`release`); None before, and in a clean run."""
        return self._released_at

    def lost_to_clock(self, timers: Sequence[float], *, since: float = 0.0) -> str | None:
        """A wait the sweep meant to answer before a timer fired that lost to it: its answer was due by the
        schedule (the handler waiting on it, as the step log read when the timer fired, plus
        `Resolution.after`) before one of `timers` fired (when the server journaled its completion), but was
        sent after it or never, as a busy machine runs the resolver late; a handler racing the wait against
        that timer went on with the timer's branch. A wait due after the timer (`Resolution.after` longer than
        it) lost as the user meant. With `since` (a point's release, `released_at`), only its replay's
        waits count, answered no sooner than that. What lost and how late, or None."""
        if not timers:
            return None
        events = [r for r in _lines(self.step_log) if r.get("invocation") == self.invocation_id]
        for wait in self.waits():
            if self.value_of(wait)[1] is not None:
                continue  # nothing answers it: the timer ends the wait as the code says
            sent = self.sent.get(wait.n)
            for fired in timers:
                due = _due(wait, events, since, self.resolution.after, until=fired)
                if due is None:
                    continue
                if sent is None or sent > fired:
                    ahead = fired - due
                    when = "never answered" if sent is None else f"answered {sent - fired:.1f}s after it"
                    return f"{wait.label}, due {ahead:.1f}s before the timer fired, was {when}"
        return None

    def _held(self, wait: Wait) -> bool:
        if self._released_at is not None:
            return False
        if wait.named in self.hold_ops:
            return True
        if self.hold_at is None:
            return False
        # A journal only grows: once it held the point's entries, the wait is held until the release.
        self._holding = self._holding or self.journal_length() >= self.hold_at
        return self._holding

    def _loop(self) -> None:
        while not self._stop.wait(_POLL):
            events = [r for r in _lines(self.step_log) if r.get("invocation") == self.invocation_id]
            for wait in read_waits(self.step_log, self.invocation_id):
                if wait.n in self.resolved:
                    continue
                since = self._released_at or 0.0
                begun = _waiting_since(wait, events, since)
                if begun is None or time.time() < max(begun, since) + self.resolution.after:
                    continue
                if self._held(wait) or (wait.guess and not self.idle()):
                    continue
                if not self._results_journaled(events, since):
                    continue
                value, why = self.value_of(wait)
                if why is not None:
                    continue
                self.sent[wait.n] = time.time()
                try:
                    self._resolve(wait, value)
                except PaidtwiceError as err:
                    self.failure = f"{wait.label}, which the sweep could not resolve: {err}"
                self.resolved[wait.n] = time.time()

    def _results_journaled(self, events: list[dict[str, Any]], since: float) -> bool:
        """Every step the handler ran (in this process's life) has its command and its result in the
        journal: a resolution sent before a step's result is journaled comes first in the journal, and the
        clean run's order would be the load's, not the code's (0.2 s of settling fell short at load 30)."""
        if self.journal_labels is None:
            return True
        ended = sum(
            1
            for e in events
            if e.get("event") == "step_end" and not e.get("by") and float(e.get("at", 0.0)) >= since
        )
        labels = self.journal_labels()
        commands = sum(1 for label in labels if label.startswith("Command: Run"))
        results = sum(1 for label in labels if label.startswith("Notification: Run"))
        return commands >= ended and results >= commands

    def _resolve(self, wait: Wait, value: Any) -> None:
        if wait.kind == "awakeable":
            self.ingress.resolve_awakeable(wait.name, value)
            return
        handler = promise_resolvers(self.step_log, self.served_as)[wait.name]
        self.ingress.send(self.served_as, handler, value, key=self.key)
