"""The verdict on one replay, read from the frames the SDK answered and from what the replay stopped."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from paidtwice._words import count
from paidtwice.agent import MISMATCH_ERROR_CODE, read_fields
from paidtwice.recover import read_mismatch
from paidtwice.replay._intercept import ReplayState
from paidtwice.replay._journal import JournalFile
from paidtwice.replay._protocol import END, ERROR, SUSPENSION, Frame, is_command, message_label
from paidtwice.replay._results import ReplayResult

__all__ = ["Outcome", "judge"]


@dataclass(frozen=True)
class Outcome:
    """What one replay produced, before it is judged."""

    frames: tuple[Frame, ...]
    """Every protocol message the SDK sent."""
    replay: ReplayState
    """The replay's state at its end (calls, what was stopped)."""
    given_up: str | None
    """Why the replay was given up before it settled (stuck, or past the overall bound); None when it
    settled."""
    crashed: str | None
    """The SDK's ASGI app raised (its exception, in one line)."""


def judge(journal: JournalFile, outcome: Outcome, seed: str) -> ReplayResult:
    """The verdict on a journal from what its replay produced."""
    replay = outcome.replay
    frames = outcome.frames
    new_commands = [f for f in frames if is_command(f.type)]
    errors = [f for f in frames if f.type == ERROR]
    base = ReplayResult(
        path=str(journal.path) if journal.path else None,
        invocation_id=journal.invocation_id,
        service=journal.service,
        handler=journal.handler,
        verdict="fails",
        index=None,
        recorded=None,
        attempted=None,
        labels_agree=None,
        message="",
        next_command=None,
        outside_calls=tuple(replay.calls),
        past_end=_past_end(replay),
        entries=len(journal.entries),
        seed=seed,
    )

    def verdict(**changes: Any) -> ReplayResult:
        return dataclasses.replace(base, **changes)

    # Whatever the SDK sends after a stop (an error about the step or request cut short) follows from the
    # stop: the stop is the outcome. A mismatch is found before the code runs on, so it never follows one.
    if replay.stop_reason is not None:
        if replay.stop_while_replaying and not replay.stop_step:
            return verdict(verdict="undecided", message=replay.stop_reason)
        if new_commands:
            next_command = message_label(new_commands[0])
        elif replay.stop_step:
            next_command = f"{replay.stop_reason} (again: its command is journaled without a result)"
        else:
            next_command = replay.stop_reason
        return verdict(verdict="continues", next_command=next_command, message=replay.stop_reason)
    if errors:
        fields = read_fields(errors[0].body)
        raw_code = fields.get(1, 0)
        code = raw_code if isinstance(raw_code, int) else 0
        text = fields.get(2, b"")
        message = text.decode(errors="replace") if isinstance(text, bytes) else ""
        mismatch = read_mismatch(message, journal.journal()) if code == MISMATCH_ERROR_CODE else None
        if mismatch is not None:
            upto = mismatch.command_index if mismatch.command_index is not None else -1
            commands = _commands(journal)[: upto + 1]
            return verdict(
                verdict="diverges",
                index=mismatch.index,
                command_index=mismatch.command_index,
                recorded=mismatch.recorded,
                attempted=mismatch.attempted,
                labels_agree=mismatch.labels_agree,
                message=message,
                recorded_commands=tuple(label for _, label in commands),
                command_entries=tuple(index for index, _ in commands),
            )
        return verdict(verdict="fails", message=f"error {code}: {message}")
    if outcome.given_up is not None:
        return verdict(verdict="undecided", message=outcome.given_up)
    if outcome.crashed is not None:
        return verdict(verdict="fails", message=outcome.crashed)
    if new_commands:
        return verdict(verdict="continues", next_command=message_label(new_commands[0]))
    if any(f.type == SUSPENSION for f in frames):
        waiting = _last_command(journal)
        return verdict(verdict="continues", next_command=f"wait for the completion of {waiting}")
    if any(f.type == END for f in frames):
        if journal.complete:
            return verdict(verdict="replays")
        return verdict(verdict="continues", next_command="end")
    return verdict(verdict="fails", message="the SDK ended the attempt without an outcome")


def _command_label(entry_type: str, name: str) -> str:
    # As the journal reader labels an entry ("run weather", "sleep", "input").
    return f"{entry_type.split(':', 1)[1].strip().lower()} {name}".strip()


def _commands(journal: JournalFile) -> tuple[tuple[int, str], ...]:
    """The journal's commands by command index (the index an SDK mismatch names): each one's entry index
    and label."""
    return tuple(
        (e.index, _command_label(e.type, e.name)) for e in journal.entries if e.type.startswith("Command:")
    )


def _last_command(journal: JournalFile) -> str:
    for entry in reversed(journal.entries):
        if entry.type.startswith("Command:"):
            return _command_label(entry.type, entry.name)
    return "the input"


def _past_end(replay: ReplayState) -> str:
    calls = sum(1 for call in replay.calls if not call.during_replay)
    parts = []
    if replay.stop_reason is not None and replay.stop_step:
        parts.append(f"stopped before step '{replay.stop_reason.removeprefix('run ')}' executed")
    elif replay.stop_reason is not None:
        parts.append(f"stopped at {replay.stop_reason}")
    if calls:
        parts.append(f"{count(calls, 'model call')} answered by the stub")
    return "; ".join(parts) or "nothing past the journal's end ran"
