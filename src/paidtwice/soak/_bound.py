"""The bound of one agent kill: of the model calls the killed process made, those whose answer the journal
lacked when its replacement started.

A model call the dead agent made is paid again by the replay only if its answer is not in the journal when
the replacement starts, whether the call was still open at the kill or its answer had come back but not
reached the journal. Which process made a call is the agent host's word (`ModelCall.agent`), not the time
the stub read it: on a busy machine the stub reads a request seconds after it was sent, after the process
that sent it was killed and replaced. So the journal is read at each kill (a completed invocation's journal
may be gone by the end) and the calls are counted at the end, once every request has reached the stub. At
each kill the server is asked once, for the Run entries of the invocations not completed before it, never
for each invocation by id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from paidtwice.agent import AgentAttempt
from paidtwice.engine import SqlClient, epoch
from paidtwice.results import KillSnapshot
from paidtwice.stub import ModelCall

__all__ = ["AgentKill", "journaled_model_answers", "model_answer_times", "snapshot"]


@dataclass(frozen=True)
class AgentKill:
    """One kill of the agent, as the drive saw it: what `snapshot` needs to count what it cut off."""

    pid: int
    """The process killed."""
    alive_since: float
    """When it began to serve (the soak's start for the first)."""
    killed_at: float
    """When the SIGKILL was sent."""
    back_at: float
    """When its replacement listened."""
    answers: dict[str, tuple[float, ...] | None]
    """When each model answer of each invocation not completed before the kill was appended, read just after
    the replacement listened; None for an invocation completed before the kill, every answer journaled."""


def snapshot(
    calls: Sequence[ModelCall], kill: AgentKill, attempts: Sequence[AgentAttempt], *, by_order: bool
) -> KillSnapshot:
    """Of the killed process's calls among `calls` (the lane's, once every request reached the stub), those
    whose answer the journal lacked when the replacement listened; `attempts` are the host's (its attempt
    log, read once at the end).

    A call's answer is known by its script turn (turn N: the N-th model answer), unless `by_order` (one turn
    answers several calls): then by its order in the process. A journaled agent asks one question at a time
    and goes on only once its answer is journaled, so of an invocation's calls in one process, the first
    ones are those whose answers that process got journaled (appended after its first attempt there began
    and before the replacement listened), and the rest lack theirs. By turn, a call asked again for an
    answer the journal holds lacks nothing: the kill did not cost it.
    """
    mine: dict[str, list[ModelCall]] = {}
    for call in calls:
        if call.agent == kill.pid and call.started >= kill.alive_since:
            mine.setdefault(call.invocation_id, []).append(call)
    began = _first_attempts(attempts, kill.pid)
    lacking: list[ModelCall] = []
    for invocation, its in mine.items():
        answers = kill.answers.get(invocation, ())
        if answers is None:
            continue
        if by_order:
            since = began.get(invocation, kill.alive_since)
            lacking.extend(its[sum(1 for at in answers if since <= at < kill.back_at) :])
        else:
            journaled = sum(1 for at in answers if at < kill.back_at)
            lacking.extend(call for call in its if call.turn > journaled)
    answered = [c for c in lacking if c.finished is not None and c.finished <= kill.killed_at and c.delivered]
    return KillSnapshot(
        at=kill.killed_at,
        down=round(kill.back_at - kill.killed_at, 3),
        open_calls=len(lacking) - len(answered),
        unjournaled_answers=len(answered),
        invocations_lacking=len({call.invocation_id for call in lacking}),
    )


def _first_attempts(attempts: Sequence[AgentAttempt], pid: int) -> dict[str, float]:
    """When each invocation's first attempt served by process `pid` started."""
    began: dict[str, float] = {}
    for attempt in attempts:
        if attempt.pid == pid:
            began[attempt.invocation_id] = min(attempt.at, began.get(attempt.invocation_id, attempt.at))
    return began


def journaled_model_answers(
    sql: SqlClient, service: str, model_steps: frozenset[str], *, completed_after: float
) -> dict[str, tuple[float, ...] | None]:
    """When each model answer in each invocation's journal was appended (`model_answer_times`); None for an
    invocation that had completed by `completed_after`, whose every answer is in its journal."""
    since = datetime.fromtimestamp(completed_after, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    done_before = f"target_service_name = '{service}' AND status = 'completed' AND completed_at < '{since}'"
    done = {str(row["id"]) for row in sql.query(f"SELECT id FROM sys_invocation WHERE {done_before}")}
    rows = sql.query(
        "SELECT id, entry_type, name, appended_at FROM sys_journal WHERE id IN ("
        f"SELECT id FROM sys_invocation WHERE target_service_name = '{service}' AND NOT ({done_before})) "
        "AND entry_type IN ('Command: Run', 'Notification: Run') ORDER BY id, index"
    )
    answers: dict[str, tuple[float, ...] | None] = dict.fromkeys(done)
    answers.update(
        (invocation, tuple(times)) for invocation, times in model_answer_times(rows, model_steps).items()
    )
    return answers


def model_answer_times(
    rows: Iterable[Mapping[str, Any]], model_steps: frozenset[str]
) -> dict[str, list[float]]:
    """When each model answer was appended, per invocation, from journal rows (`id`, `entry_type`, `name`,
    `appended_at`) in each journal's order; rows of other entry types are passed over.

    A model answer is a `Notification: Run` completing a `Command: Run` of `model_steps`. The soak's agents
    await each step before the next, so a journal's Run results follow its Run commands in order.
    """
    steps: dict[str, list[str]] = {}
    appended: dict[str, list[float]] = {}
    for row in rows:
        invocation = str(row["id"])
        pending = steps.setdefault(invocation, [])
        if row["entry_type"] == "Command: Run":
            pending.append(str(row.get("name") or ""))
        elif row["entry_type"] == "Notification: Run" and pending and pending.pop(0) in model_steps:
            appended.setdefault(invocation, []).append(epoch(row.get("appended_at")) or 0.0)
    return appended
