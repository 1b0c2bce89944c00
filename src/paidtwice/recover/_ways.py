"""Ways out of a stuck invocation, priced before they are taken.

A paused (or endlessly backing-off) invocation keeps its journal, so every way out must respect what is
recorded: a resume replays the whole journal on the target code; a restart-as-new from the start keeps only
the input, so every recorded step runs (and is paid for) again; a restart from a journal prefix keeps the
prefix, which must end on completed entries; a kill keeps nothing running.

Whether the target code can replay the journal is judged from evidence, not assumed: the last failure on
the pinned code, and, for another deployment, the journal of an invocation that completed on it. Where the
two disagree at an index, a resume there is certain to mismatch at that index.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from paidtwice._exceptions import AdminError, NotFound, PaidtwiceError, UsageError
from paidtwice._words import count, entry_at
from paidtwice.engine import AdminClient, InvocationRow, JournalEntry, SqlClient
from paidtwice.recover._mismatch import Explanation, explain

__all__ = [
    "OPERATOR_PAUSE_PRICE",
    "ApplyResult",
    "Judge",
    "RecoveryPlan",
    "WayOut",
    "apply_way",
    "plan_recovery",
]

_STUCK = ("paused", "backing-off")
OPERATOR_PAUSE_PRICE = (
    "the retries stop, and nothing is paid again for the pause: on restate-server 1.7.12 the attempt in "
    "flight finishes its step first and the step's result is journaled (a journaled model call in flight "
    "is paid once; the deck's operator-pause-mid-call row measures it); restate-server 1.8.0's notes say "
    "its pause aborts the attempt, so a started ctx.run runs, and is paid, again on resume"
)
"""What the admin API's pause costs, as measured on the pinned server (row operator-pause-mid-call)."""
# Commands that wait for a completion notification of their own.
_AWAITING = {"Run", "Sleep", "Call", "Awakeable", "GetPromise", "PeekPromise", "CompletePromise"}


@dataclass(frozen=True)
class WayOut:
    """One way out of a stuck invocation, and what it costs."""

    name: str
    """What to pass to `--apply`: "resume", "restart", "restart-from:N" or "kill"."""
    title: str
    """What it does, in words."""
    keeps: str
    """Which journal entries it keeps."""
    runs_again: tuple[str, ...]
    """Recorded steps (by name) that will execute, and be paid for, again."""
    replay: str
    """Whether the target code can replay what is kept, and why we think so."""
    certain_mismatch_at: int | None
    """The journal entry (entry index) where the replay is certain to mismatch, if it is."""


@dataclass(frozen=True)
class RecoveryPlan:
    """A stuck invocation and the ways out its state allows."""

    invocation_id: str
    """The invocation."""
    target: str
    """Its service/handler."""
    status: str
    """Its status."""
    pinned_deployment: str | None
    """Deployment it is pinned to."""
    target_deployment: str | None
    """Deployment a resume would move it to, if another was asked for."""
    journal: tuple[JournalEntry, ...]
    """Its journal."""
    failure: Explanation | None
    """Its last failure, read against the journal."""
    ways: tuple[WayOut, ...]
    """Ways out, in the order worth trying."""


@dataclass(frozen=True)
class ApplyResult:
    """What carrying out a way out did, as measured."""

    way: str
    """The way out applied."""
    invocation_id: str
    """The invocation that carries on (the new one after a restart)."""
    status: str
    """Its status when the wait ended."""
    steps_run_again: tuple[str, ...]
    """Run steps the new attempt executed (journal entries beyond what was kept), by name."""
    failure: Explanation | None
    """The failure it met, if it met one."""
    admin_log: tuple[str, ...]
    """The admin requests made, with their statuses."""


def _commands(journal: Sequence[JournalEntry]) -> list[JournalEntry]:
    return [entry for entry in journal if entry.is_command]


def completed_prefixes(journal: Sequence[JournalEntry]) -> list[int]:
    """Entry indexes N such that entries 0..N leave no step waiting for its completion."""
    pending = 0
    ends = []
    for entry in journal:
        kind = entry.type.split(":", 1)[-1].strip()
        if entry.is_command and kind in _AWAITING:
            pending += 1
        elif not entry.is_command and pending > 0:
            pending -= 1
        if pending == 0 and entry.type != "Command: Output":
            ends.append(entry.index)
    return ends


def _run_names(entries: Sequence[JournalEntry]) -> tuple[str, ...]:
    return tuple(e.name or "(unnamed)" for e in entries if e.type == "Command: Run")


def _reference_journal(sql: SqlClient, deployment: str, target: str) -> tuple[str, list[JournalEntry]] | None:
    rows = sql.query(
        "SELECT id FROM sys_invocation WHERE pinned_deployment_id = "
        f"'{_quoted(deployment)}' AND target = '{_quoted(target)}' AND status = 'completed' "
        "AND completion_result = 'success' LIMIT 1"
    )
    if not rows:
        return None
    reference = str(rows[0]["id"])
    return reference, sql.journal(reference)


def _quoted(text: str) -> str:
    if "'" in text:
        raise UsageError(f"{text!r} is not a deployment or target name")
    return text


def _first_difference(kept: Sequence[JournalEntry], reference: Sequence[JournalEntry]) -> int | None:
    """The command index of the first command that differs."""
    mine, theirs = _commands(kept), _commands(reference)
    for position, (a, b) in enumerate(zip(mine, theirs, strict=False)):
        if (a.type, a.name) != (b.type, b.name):
            return position
    return None


def _replay_verdict(
    sql: SqlClient,
    *,
    kept: Sequence[JournalEntry],
    target: str,
    deployment: str | None,
    pinned: str | None,
    failure: Explanation | None,
) -> tuple[str, int | None]:
    if deployment is None or deployment == pinned:
        if failure is not None and failure.mismatch is not None:
            return (
                f"same code, which last failed with RT0016 at {failure.mismatch.where} "
                f"(journal: {failure.mismatch.recorded}; code: {failure.mismatch.attempted}); "
                "it will mismatch again unless what differed between attempts changes",
                None,
            )
        return "same code as recorded; it replays unless the code is non-deterministic", None
    found = _reference_journal(sql, deployment, target)
    if found is None:
        return (
            f"unknown: no invocation of {target} has completed on {deployment} to compare with "
            "(run one there first)",
            None,
        )
    reference_id, reference = found
    index = _first_difference(kept, reference)
    if index is None:
        return f"replays: {reference_id} on {deployment} took the same first steps", None
    mine, theirs = _commands(kept)[index], _commands(reference)[index]
    return (
        f"CERTAIN MISMATCH at {entry_at(mine.index, index)}: the journal has {mine.label()}, code on "
        f"{deployment} runs {theirs.label()} there ({reference_id})",
        mine.index,
    )


Judge = Callable[[int], tuple[str, int | None]]
"""Does the target code replay the journal kept up to an entry index: (in words, certain mismatch index)."""


def plan_recovery(
    sql: SqlClient,
    invocation_id: str,
    *,
    deployment: str | None = None,
    judge: Judge | None = None,
    retrying: bool = False,
) -> RecoveryPlan:
    """The ways out an invocation's state allows, with what each keeps and pays again.

    `judge`, when given, decides whether the target code replays what a way keeps (`paidtwice recover
    --app` replays the kept journal offline against the code); otherwise it is judged from the evidence
    on the server. `retrying` also plans for an invocation that is running an attempt after a failure
    (what `watch` lists as retrying between two backing-off reads): its ways are a backing-off one's."""
    row = _stuck_invocation(sql, invocation_id, retrying=retrying)
    journal = tuple(sql.journal(invocation_id))
    try:
        failure: Explanation | None = explain(sql, invocation_id)
    except UsageError:
        failure = None
    target = _Target(sql, row, deployment, judge)
    if row.status == "paused":
        ways = [_resume(target, journal, failure)]
    else:
        ways = [
            WayOut(
                "pause",
                "pause it now, then resume once the code or what it depends on is fixed",
                f"all {count(len(journal), 'entry', 'entries')}",
                (),
                OPERATOR_PAUSE_PRICE,
                None,
            )
        ]
    ways.append(_restart(journal))
    from_prefix = _restart_from_prefix(target, journal)
    if from_prefix is not None:
        ways.append(from_prefix)
    ways.append(WayOut("kill", "kill it and leave it", "nothing runs again", (), "nothing is replayed", None))
    return RecoveryPlan(
        invocation_id=invocation_id,
        target=row.target,
        status=row.status,
        pinned_deployment=row.pinned_deployment_id,
        target_deployment=deployment,
        journal=journal,
        failure=failure,
        ways=tuple(ways),
    )


def _stuck_invocation(sql: SqlClient, invocation_id: str, *, retrying: bool = False) -> InvocationRow:
    row = sql.invocation(invocation_id)
    if row is None:
        raise NotFound(f"no invocation {invocation_id} on this server")
    if row.status not in _STUCK and not (retrying and row.status == "running" and row.last_failure):
        detail = "it has finished" if row.status == "completed" else "it is not stuck"
        raise UsageError(
            f"invocation {invocation_id} is {row.status}: {detail}; recover works on paused or "
            "backing-off invocations"
        )
    return row


@dataclass(frozen=True)
class _Target:
    """The code a way out would run on, and how to judge whether it replays what the way keeps."""

    sql: SqlClient
    """The server the invocation is on."""
    row: InvocationRow
    """The stuck invocation."""
    deployment: str | None
    """The deployment asked for; None for the pinned one."""
    judge: Judge | None
    """The offline judge (`recover --app`); None to judge from the evidence on the server."""

    def verdict(
        self, kept: Sequence[JournalEntry], last_index: int | None, failure: Explanation | None
    ) -> tuple[str, int | None]:
        """Whether the code replays `kept` (up to `last_index`): in words, and the index of a certain
        mismatch."""
        if self.judge is not None and last_index is not None:
            return self.judge(last_index)
        return _replay_verdict(
            self.sql,
            kept=kept,
            target=self.row.target,
            deployment=self.deployment,
            pinned=self.row.pinned_deployment_id,
            failure=failure,
        )


def _resume(target: _Target, journal: Sequence[JournalEntry], failure: Explanation | None) -> WayOut:
    replay, index = target.verdict(journal, journal[-1].index if journal else None, failure)
    pinned = target.row.pinned_deployment_id
    where = f"on {target.deployment}" if target.deployment else f"on its pinned deployment {pinned}"
    return WayOut(
        "resume", f"resume {where}", f"all {count(len(journal), 'entry', 'entries')}", (), replay, index
    )


def _restart(journal: Sequence[JournalEntry]) -> WayOut:
    return WayOut(
        "restart",
        "kill, then restart-as-new from the start",
        "the input only (a new invocation, a fresh journal)",
        tuple(f"{name} runs again" for name in _run_names(journal)),
        "a fresh journal replays on any code",
        None,
    )


def _restart_from_prefix(target: _Target, journal: Sequence[JournalEntry]) -> WayOut | None:
    """Restart-as-new from the last completed prefix, the others named; None when there is none."""
    prefixes = [n for n in completed_prefixes(journal) if 0 < n < journal[-1].index] if journal else []
    if not prefixes:
        return None
    n = prefixes[-1]
    kept = [e for e in journal if e.index <= n]
    replay, index = target.verdict(kept, n, None)
    others = ", ".join(map(str, prefixes[:-1]))
    return WayOut(
        f"restart-from:{n}",
        f"kill, then restart-as-new from entry {n}"
        + (f" (other completed prefixes end at {others})" if others else ""),
        f"entries 0..{n}: " + ", ".join(e.label() for e in kept if e.is_command),
        tuple(f"{name} runs again" for name in _run_names([e for e in journal if e.index > n])),
        replay,
        index,
    )


def _wait_settled(sql: SqlClient, invocation_id: str, *, timeout: float, since: float) -> str:
    """Wait until completed, paused, or backing off after a failure newer than `since`."""
    deadline = time.monotonic() + timeout
    while True:
        row = sql.invocation(invocation_id)
        if row is not None:
            if row.status in ("completed", "paused"):
                return row.status
            if row.status == "backing-off" and row.last_failure and _after(row.last_start_at, since):
                return row.status
        if time.monotonic() > deadline:
            return row.status if row is not None else "unknown"
        time.sleep(0.05)


def _after(stamp: str | None, since: float) -> bool:
    from datetime import datetime

    if not stamp:
        return False
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() >= since - 0.5


def apply_way(
    admin: AdminClient,
    sql: SqlClient,
    plan: RecoveryPlan,
    way: str,
    *,
    timeout: float = 120.0,
) -> ApplyResult:
    """Carry out one of the plan's ways out and measure what it did."""
    names = {w.name for w in plan.ways}
    if way not in names:
        allowed = ", ".join(sorted(names))
        raise UsageError(f"{way!r} is not a way out of this {plan.status} invocation (allowed: {allowed})")
    log_start = len(admin.log)
    invocation_id = plan.invocation_id
    kept = -1
    started = time.time()
    if way == "resume":
        admin.resume(invocation_id, deployment=plan.target_deployment)
    elif way == "pause":
        admin.pause(invocation_id)
    else:
        admin.kill(invocation_id)
        _wait_for(sql, invocation_id, "completed", timeout=30.0)
        if way == "restart":
            invocation_id = admin.restart_as_new(invocation_id)
        elif way.startswith("restart-from:"):
            kept = int(way.split(":", 1)[1])
            invocation_id = admin.restart_as_new(
                invocation_id, from_entry=kept, deployment=plan.target_deployment
            )
    if way == "kill":
        status = "completed"
    elif way == "pause":
        _wait_for(sql, invocation_id, "paused", timeout=timeout)
        status = "paused"
    else:
        status = _wait_settled(sql, invocation_id, timeout=timeout, since=started)
    journal = sql.journal(invocation_id)
    ran: tuple[str, ...] = ()
    if way.startswith("restart"):
        ran = _run_names([e for e in journal if e.index > kept])
    failure = None
    if status in ("paused", "backing-off"):
        try:
            failure = explain(sql, invocation_id)
        except PaidtwiceError:
            failure = None
    log = tuple(f"{c.method} {c.path} -> {c.status}" for c in admin.log[log_start:])
    return ApplyResult(way, invocation_id, status, ran, failure, log)


def _wait_for(sql: SqlClient, invocation_id: str, status: str, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        row = sql.invocation(invocation_id)
        if row is not None and row.status == status:
            return
        if time.monotonic() > deadline:
            raise AdminError(
                f"{invocation_id} did not become {status} within {timeout:.0f}s",
                status=0,
                body="",
            )
        time.sleep(0.05)
