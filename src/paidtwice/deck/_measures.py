"""What a deck run's logs say once it has settled: the waits it asked for, a node kill's stalls, where its
recovery went; read from what was logged (the stub's ledger, the agent host's wire and step logs,
`sys_journal`), with no server to ask."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paidtwice.agent import AgentAttempt
from paidtwice.engine import FailureEvent, JournalEntry, epoch
from paidtwice.lab import PolledAttempt
from paidtwice.recover import MISMATCH_CODE, read_mismatch
from paidtwice.results import (
    Check,
    Mismatch,
    NodeKillRecord,
    RecoveryBreakdown,
    RunRecord,
)
from paidtwice.stub import ModelCall

__all__ = [
    "NodeKill",
    "Recovery",
    "deliberate_wait",
    "mismatch_of",
    "node_kill_record",
    "recovery_check",
    "recovery_of",
]


@dataclass(frozen=True)
class NodeKill:
    """A cluster node killed under a run's invocation, as the kill saw it."""

    partition: int
    """The partition the invocation lives on."""
    node: str
    """The node that led it, and was killed."""
    killed_at: float
    """Wall-clock time of the kill."""
    took_over: str
    """The node that led the partition next."""
    takeover_at: float
    """Wall-clock time the lab saw the new leader."""


def node_kill_record(
    kill: NodeKill | None,
    back_at: float | None,
    journal: Sequence[JournalEntry],
    agent: Sequence[AgentAttempt],
    *,
    pause: float,
) -> NodeKillRecord | None:
    """The node kill's figures: the stalls read off the journal's append times and the agent's wire log."""
    if kill is None:
        return None

    def appended(entry: JournalEntry) -> float:
        return epoch(entry.appended_at) or 0.0

    after = [appended(e) for e in journal if appended(e) > kill.killed_at]
    outputs = [appended(e) for e in journal if e.type == "Command: Output"]
    sleeps = [appended(e) for e in journal if e.type == "Command: Sleep"]
    pause_ends = sleeps[0] + pause if sleeps else kill.killed_at
    resumed = [attempt.at for attempt in agent if attempt.at > kill.killed_at]
    return NodeKillRecord(
        partition=kill.partition,
        killed_node=kill.node,
        took_over=kill.took_over,
        takeover_after=round(kill.takeover_at - kill.killed_at, 3),
        pause_left_at_kill=round(max(0.0, pause_ends - kill.killed_at), 3),
        resumed_after=round(min(resumed) - kill.killed_at, 3) if resumed else None,
        stall_to_next_entry=round(min(after) - kill.killed_at, 3) if after else None,
        stall_to_completion=round(outputs[0] - kill.killed_at, 3) if outputs else None,
        node_back_after=round(back_at - kill.killed_at, 3) if back_at is not None else None,
    )


def mismatch_of(failures: Sequence[FailureEvent], journal: Sequence[JournalEntry]) -> Mismatch | None:
    """The invocation's last journal mismatch (RT0016), read against its journal; None if it had none."""
    for event in reversed(failures):
        if event.doc_code == MISMATCH_CODE:
            return read_mismatch(event.message, journal)
    return None


def _union(intervals: Iterable[tuple[float, float]]) -> float:
    total, end = 0.0, float("-inf")
    for lo, hi in sorted(intervals):
        if hi <= end:
            continue
        total += hi - max(lo, end)
        end = hi
    return total


def deliberate_wait(
    journal: Sequence[JournalEntry],
    attempts: Sequence[PolledAttempt],
    agent: Sequence[AgentAttempt],
    kill_at: float | None,
    up_at: float | None,
    calls: Sequence[Any],
    started: float,
    waits: Sequence[tuple[float, float]] = (),
) -> float:
    """Seconds of waits the experiment itself asks for: pauses, down time, held answers, backoff.

    The backoff before each attempt that reached the agent is read off the wire: from the end of the attempt
    before it (its failure, or the kill) to its start. Backoff states polled from sys_invocation add any
    the wire cannot see.
    """
    spans: list[tuple[float, float]] = list(waits)
    sleeps = [epoch(e.appended_at) for e in journal if e.type == "Command: Sleep"]
    woke = [epoch(e.appended_at) for e in journal if e.type == "Notification: Sleep"]
    for lo, hi in zip(sleeps, woke, strict=False):
        if lo is not None and hi is not None:
            spans.append((lo, hi))
    if kill_at is not None and up_at is not None:
        spans.append((kill_at, up_at))
    for attempt in attempts:
        if attempt.backoff_from is not None and attempt.backoff_until is not None:
            spans.append((attempt.backoff_from, attempt.backoff_until))
    for before, after in itertools.pairwise(agent):
        ended = before.ended if before.ended is not None else kill_at
        if ended is not None and ended < after.at:
            spans.append((ended, after.at))
    for call in calls:
        if call.delivered is False and call.finished is not None:
            spans.append((call.started, call.finished))
    return _union((max(lo, started), hi) for lo, hi in spans if hi > lo)


# -- recovery --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Step:
    """A line of the host's step log: a context operation, a model request, a step's execution."""

    event: str
    """"op" (a context operation called), "model_start", "step_start", ..."""
    n: int
    """Its number among the invocation's events of its kind in that process (a replay counts from 1 again)."""
    at: float
    """Wall-clock time it was logged."""


def _steps(step_log: Path, invocation_id: str) -> list[_Step]:
    try:
        lines = step_log.read_text().splitlines()
    except FileNotFoundError:
        return []
    steps = []
    for line in lines:
        try:
            raw = json.loads(line)
        except ValueError:
            continue  # a line cut by the kill
        if raw.get("invocation") == invocation_id:
            steps.append(_Step(str(raw["event"]), int(raw.get("n", 0)), float(raw["at"])))
    return steps


def _regain(steps: Sequence[_Step], *, kill_at: float, replay_at: float) -> float | None:
    """Seconds from the replay's first step until it called again the last operation called before the kill.

    Operations are numbered per process, and the replacement is a new process: its replay calls the same
    operations in the same order, so the one to find has the same number.
    """
    lost = [s.n for s in steps if s.event == "op" and s.at <= kill_at]
    replay = [s for s in steps if s.at >= replay_at]
    again = [s.at for s in replay if s.event == "op" and lost and s.n == lost[-1]]
    if not again:
        return None
    return round(min(again) - min(s.at for s in replay), 3)


@dataclass(frozen=True)
class Recovery:
    """A run's recovery time, measured from the agent listening again after the kill."""

    recovery_s: float | None
    """Seconds until the invocation's output was journaled (None: no kill, or no completion)."""
    retry_wait_s: float | None
    """Of those, the seconds until the server's next attempt reached the agent."""
    breakdown: RecoveryBreakdown | None
    """Where the rest went."""


def recovery_of(
    journal: Sequence[JournalEntry],
    status: str,
    *,
    kill_at: float | None,
    up_at: float | None,
    calls: Sequence[ModelCall],
    agent: Sequence[AgentAttempt],
    step_log: Path,
    invocation_id: str,
) -> Recovery:
    """The recovery of a run killed at `kill_at` whose agent listened again at `up_at`."""
    output_at = next((epoch(e.appended_at) for e in journal if e.type == "Command: Output"), None)
    if kill_at is None or up_at is None or output_at is None or status != "completed":
        return Recovery(None, None, None)
    recovery_s = round(output_at - up_at, 3)
    replays = [a.at for a in agent if a.at >= up_at]
    if not replays:  # the replay reached the agent before the lab saw it listen (a restarted server)
        return Recovery(recovery_s, None, None)
    retry_wait_s = round(min(replays) - up_at, 3)
    breakdown = _breakdown(
        recovery_s=recovery_s,
        retry_wait_s=retry_wait_s,
        up_at=up_at,
        kill_at=kill_at,
        calls=calls,
        agent=agent,
        step_log=step_log,
        invocation_id=invocation_id,
    )
    return Recovery(recovery_s, retry_wait_s, breakdown)


def _breakdown(
    *,
    recovery_s: float,
    retry_wait_s: float,
    up_at: float,
    kill_at: float,
    calls: Sequence[ModelCall],
    agent: Sequence[AgentAttempt],
    step_log: Path,
    invocation_id: str,
) -> RecoveryBreakdown:
    """Where a recovery went after its first replay (at `up_at + retry_wait_s`): the model's answers (the
    stub's ledger), the journal's round trips (the wire), the rest; and the time to regain what the kill
    lost (the step log)."""
    replay_at = up_at + retry_wait_s
    answered = [c for c in calls if c.started >= up_at and c.finished is not None]
    model_wait = sum((c.finished - c.started for c in answered if c.finished is not None), 0.0)
    waits = [w for attempt in agent if attempt.at >= up_at for w in attempt.journal_waits]
    journal_wait = sum(waits, 0.0)
    return RecoveryBreakdown(
        regain_s=_regain(_steps(step_log, invocation_id), kill_at=kill_at, replay_at=replay_at),
        model_calls=sum(1 for c in calls if c.started >= up_at),
        model_wait_s=round(model_wait, 3),
        journal_round_trips=len(waits),
        journal_wait_s=round(journal_wait, 3),
        other_s=round(recovery_s - retry_wait_s - model_wait - journal_wait, 3),
    )


def recovery_check(first: RunRecord, second: RunRecord, latency: float) -> Check:
    """The claim that `first` takes at least one model latency longer than `second` to regain the progress
    its kill lost, from each replay's first step (the server's retry timer before it, and its jitter, belong
    to neither agent); with the model calls each recovery made."""
    a, b = first.recovery_breakdown, second.recovery_breakdown
    measured = "no recovery measured"
    ok = False
    if a is not None and b is not None and a.regain_s is not None and b.regain_s is not None:
        difference = a.regain_s - b.regain_s
        measured = (
            f"{first.mode} {a.regain_s:.3f} s ({a.model_calls} model calls in its recovery), "
            f"{second.mode} {b.regain_s:.3f} s ({b.model_calls}): {difference:+.3f} s"
        )
        ok = difference >= latency and a.model_calls >= b.model_calls + 1
    return Check(
        "time to regain the progress lost at the kill, from the replay's first step",
        f"the {first.mode} one longer by at least one model latency ({latency:g} s)",
        measured,
        ok,
    )
