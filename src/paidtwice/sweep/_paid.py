"""What a point's replay paid again, read from the stub's ledger at the kill: the model calls held or cut off
in flight, the answers delivered before it, and those asked for again outside the journal."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from paidtwice.results import CleanRun
from paidtwice.stub import ModelCall

__all__ = ["CallsAtKill", "asked_again", "calls_at_kill"]


@dataclass(frozen=True)
class CallsAtKill:
    """The point's model calls, seen from the kill (the stub's ledger)."""

    held: int
    """Made before the kill, answer never delivered."""
    in_flight: int
    """Cut off in flight: those, and the answers delivered inside a step whose result the journal did not
    hold yet (asked again by the replay, which runs a step again only then)."""
    answered: int
    """Answered (delivered) before the kill."""
    asked_again: int
    """Made after the kill for a call answered outside any step before it (the same turn, and for a turn
    that answers many calls, the same call): paid outside the journal."""


def calls_at_kill(calls: Sequence[ModelCall], kill_at: float, clean: CleanRun) -> CallsAtKill:
    answered = [c for c in calls if c.delivered and c.finished is not None and c.finished <= kill_at]
    after = [c for c in calls if c.started > kill_at]
    held = sum(1 for c in calls if c.started < kill_at and c.delivered is False)
    # A call the clean run made inside a step, asked again: its step ran again, which a replay does only for
    # a step whose result was not journaled. Its answer died with the process, in flight. Under
    # explicit_recovery a retry runs every step again, journaled or not: each answer asked again is paid.
    outside = [c for c in answered if clean.explicit_recovery or c.call not in clean.calls_in_steps]
    again = asked_again(outside, after, clean.model_turns)
    in_steps = max(0, asked_again(answered, after, clean.model_turns) - again)
    return CallsAtKill(held=held, in_flight=held + in_steps, answered=len(answered), asked_again=again)


def asked_again(
    answered: Sequence[ModelCall], after: Sequence[ModelCall], clean_turns: Sequence[int] = ()
) -> int:
    """The calls after the kill that ask again for an answer that had come back before it.

    A call asking what an answered call asked (its turn, and for a turn that answers many calls, its
    prompt) is one. A call of that turn with a prompt not seen before the kill is a call not made yet (the
    next worker), unless an answered call of the turn is never asked again by its prompt: its prompt then
    changed between attempts (a time in it), and that many of the new ones are it asked again.

    A positional turn tells no calls apart: when the clean run asked it more often than it had been answered
    at the kill (one-message questions, each turn 1 of its own conversation), that many of the calls after
    the kill are the ones not made yet, not answers asked again."""
    before = {(c.turn, c.asked) for c in answered}
    again = sum(1 for c in after if (c.turn, c.asked) in before)
    clean = Counter(clean_turns)
    for turn in {c.turn for c in answered if not c.asked}:
        answered_of_turn = sum(1 for c in answered if c.turn == turn and not c.asked)
        after_of_turn = sum(1 for c in after if c.turn == turn and not c.asked)
        again -= min(after_of_turn, max(0, clean[turn] - answered_of_turn))
    for turn in {c.turn for c in answered}:
        seen = {c.asked for c in after if c.turn == turn}
        lost = sum(1 for t, asked in before if t == turn and asked not in seen)
        new = sum(1 for c in after if c.turn == turn and (turn, c.asked) not in before)
        again += min(lost, new)
    return again
