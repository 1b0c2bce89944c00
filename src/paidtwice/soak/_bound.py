"""The bound of one agent kill: of the model calls the dead agent made, those whose answer the journal lacked
when its replacement started, read from the stub's ledger and the journal as they stood then.

A model call the dead agent made is paid again by the replay only if its answer is not in the journal when
the replacement starts, whether the call was still open at the kill or its answer had come back but not
reached the journal. At each kill the server is asked once, for the Run entries of the invocations not
completed before it, never for each invocation by id.
"""

from __future__ import annotations

from datetime import UTC, datetime

from paidtwice.engine import SqlClient, epoch
from paidtwice.results import KillSnapshot
from paidtwice.stub import ModelCall

__all__ = ["journaled_model_answers", "places_in_life", "snapshot"]


def places_in_life(calls: list[ModelCall], journaled_at_start: dict[str, int | None]) -> list[int]:
    """Each call's place among its invocation's model answers: those journaled when the life began, plus
    its order among the invocation's calls in this life."""
    seen: dict[str, int] = {}
    places = []
    for call in calls:
        seen[call.invocation_id] = seen.get(call.invocation_id, 0) + 1
        places.append((journaled_at_start.get(call.invocation_id) or 0) + seen[call.invocation_id])
    return places


def snapshot(
    calls: list[ModelCall],
    answers: dict[str, int | None],
    killed_at: float,
    back_at: float,
    places: list[int] | None = None,
) -> KillSnapshot:
    """Of the calls one agent life made, those whose place (their turn, unless `places` are given, one per
    call) the journal had not answered."""
    turns = places if places is not None else [call.turn for call in calls]
    lacking = [call for call, turn in zip(calls, turns, strict=True) if _lacks(answers, call, turn)]
    answered = [c for c in lacking if c.finished is not None and c.finished <= killed_at and c.delivered]
    return KillSnapshot(
        at=killed_at,
        down=round(back_at - killed_at, 3),
        open_calls=len(lacking) - len(answered),
        unjournaled_answers=len(answered),
        invocations_lacking=len({call.invocation_id for call in lacking}),
    )


def _lacks(answers: dict[str, int | None], call: ModelCall, turn: int) -> bool:
    """The journal lacked this call's answer when the replacement started (turn N: the N-th model answer)."""
    if call.invocation_id not in answers:
        return True
    journaled = answers[call.invocation_id]
    return journaled is not None and journaled < turn


def journaled_model_answers(
    sql: SqlClient, service: str, model_steps: frozenset[str], *, completed_after: float, before: float
) -> dict[str, int | None]:
    """Model answers each invocation's journal held at `before`; None for an invocation that had completed
    by `completed_after`, whose every answer is in its journal.

    A model answer is a `Notification: Run` completing a `Command: Run` of `model_steps`. The soak's agents
    await each step before the next, so a journal's Run results follow its Run commands in order.
    """
    since = datetime.fromtimestamp(completed_after, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    done_before = f"target_service_name = '{service}' AND status = 'completed' AND completed_at < '{since}'"
    answers: dict[str, int | None] = {
        str(row["id"]): None for row in sql.query(f"SELECT id FROM sys_invocation WHERE {done_before}")
    }
    rows = sql.query(
        "SELECT id, entry_type, name, appended_at FROM sys_journal WHERE id IN ("
        f"SELECT id FROM sys_invocation WHERE target_service_name = '{service}' AND NOT ({done_before})) "
        "AND entry_type IN ('Command: Run', 'Notification: Run') ORDER BY id, index"
    )
    steps: dict[str, list[str]] = {}
    for row in rows:
        invocation = str(row["id"])
        if invocation in answers and answers[invocation] is None:
            continue
        if (epoch(row.get("appended_at")) or 0.0) >= before:
            continue
        pending = steps.setdefault(invocation, [])
        if row["entry_type"] == "Command: Run":
            pending.append(str(row.get("name") or ""))
        elif pending and pending.pop(0) in model_steps:
            answers[invocation] = (answers.get(invocation) or 0) + 1
    return answers
