"""What a point's run paid again, from the stub's ledger: the model calls cut off in flight at the kill, the
answers that had come back and were asked for again after it, and, in an invocation tree, which handler
asked again."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from paidtwice.engine import JournalEntry
from paidtwice.results import CleanRun, CrashPoint
from paidtwice.stub import ModelCall

__all__ = [
    "CallsAtKill",
    "answered_differently",
    "asked_again",
    "calls_at_kill",
    "undecided_why",
    "why_not_placed",
]


@dataclass(frozen=True)
class CallsAtKill:
    """The point's model calls, seen from the kill (the stub's ledger)."""

    held: int
    """Made before the kill, answer not delivered before it."""
    in_flight: int
    """Cut off in flight: those, and the answers delivered inside a step whose result the journal did not
    hold yet (asked again by the replay, which runs a step again only then)."""
    answered: int
    """Answered (delivered) before the kill."""
    asked_again: int
    """Made after the kill for a call answered outside any step before it (the same turn, and for a turn
    that answers many calls, the same call): paid outside the journal."""
    asked_again_by: tuple[tuple[str, int], ...] = ()
    """`asked_again` by the handler (SERVICE/HANDLER) that asked again, in a tree of invocations."""
    undecided: int = 0
    """Of the answers asked again, those the clean run could not place inside a step or outside every one
    (`CleanRun.calls_undecided`): counted in `asked_again`, though their step may have been in flight."""


def calls_at_kill(calls: Sequence[ModelCall], kill_at: float, clean: CleanRun) -> CallsAtKill:
    answered = [c for c in calls if c.delivered and c.finished is not None and c.finished <= kill_at]
    after = [c for c in calls if c.started > kill_at]
    # Made before the kill and not answered before it: cut off, also when the stub finished sending just after
    # the kill (delivered, to a process that was dying: the replay asks again, as for any call in flight).
    answered_ids = {id(c) for c in answered}
    held = sum(1 for c in calls if c.started < kill_at and id(c) not in answered_ids)
    # A call the clean run made inside a step, asked again: its step ran again, which a replay does only for
    # a step whose result was not journaled. Its answer died with the process, in flight. Under
    # explicit_recovery a retry runs every step again, journaled or not: each answer asked again is paid.
    outside = [c for c in answered if clean.explicit_recovery or c.call not in clean.calls_in_steps]
    again = asked_again(outside, after, clean.model_turns)
    in_steps = max(0, asked_again(answered, after, clean.model_turns) - again)
    by = _asked_again_by(outside, after, clean)
    if by:
        # In a tree, a handler's calls are asked again by that handler only: the counts are sums of each
        # handler's own (a callee's first ask is not its caller's answer asked again).
        again = sum(n for _, n in by)
        in_steps = max(0, sum(n for _, n in _asked_again_by(answered, after, clean)) - again)
        by = tuple((h, n) for h, n in by if n)
    unsure = [c for c in outside if c.call in clean.calls_undecided]
    return CallsAtKill(
        held=held,
        in_flight=held + in_steps,
        answered=len(answered),
        asked_again=again,
        asked_again_by=by,
        undecided=min(again, asked_again(unsure, after, clean.model_turns)) if unsure else 0,
    )


def _asked_again_by(
    outside: Sequence[ModelCall], after: Sequence[ModelCall], clean: CleanRun
) -> tuple[tuple[str, int], ...]:
    """The answers asked again, by the handler of the tree that asked (each handler's calls matched only
    with its own: a callee's first ask is not its caller's asked again); empty when the calls do not say."""
    if not clean.model_callers or not all(c.by for c in (*outside, *after)):
        return ()
    handlers = sorted({*clean.model_callers, *(c.by for c in (*outside, *after))})
    counted = []
    for handler in handlers:
        turns = [t for t, h in zip(clean.model_turns, clean.model_callers, strict=False) if h == handler]
        mine = [c for c in outside if c.by == handler]
        later = [c for c in after if c.by == handler]
        counted.append((handler, asked_again(mine, later, turns)))
    return tuple(counted)


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


def answered_differently(calls: Sequence[ModelCall], clean: CleanRun) -> bool:
    """A call was given an answer the clean run was not given for that call (its turn, and what tells the
    calls of a turn apart): the run may have gone on along another path. False where the clean run does not
    say what it was answered."""
    if not clean.answers:
        return False
    given: dict[tuple[int, str], set[str]] = {}
    for turn, asked, answer in clean.answers:
        given.setdefault((turn, asked), set()).add(answer)
    return any(
        c.delivered and c.turn and c.answer.summary() not in given.get((c.turn, c.asked), set())
        for c in calls
    )


def why_not_placed(
    point: CrashPoint, journal: Sequence[JournalEntry], journal_at_kill: int, held: int
) -> str:
    """Why the kill did not land at the point's moment, in words ("" when it did): the journal held other
    entries than the moment's, or not every held call was in flight."""
    why = []
    if journal_at_kill > point.journal_entries:
        extra = [e.label() for e in journal[point.journal_entries : journal_at_kill]]
        why.append(
            f"the journal already held {journal_at_kill} entries at the kill, not {point.journal_entries}: "
            f"{', '.join(extra)} appended before it"
        )
    elif journal_at_kill < point.journal_entries:
        why.append(
            f"the journal held {journal_at_kill} entries at the kill, "
            f"not yet the moment's {point.journal_entries}"
        )
    if point.model_holds and held != len(point.model_holds):
        why.append(f"{held} of the {len(point.model_holds)} held model calls were in flight at the kill")
    return "; ".join(why)


def undecided_why(at_kill: CallsAtKill) -> str:
    """Why a point's verdict is not proven, in words ("" when it is): answers asked again that the clean
    run could not place (counted as paid again)."""
    if not at_kill.undecided:
        return ""
    return (
        f"{at_kill.undecided} of the answers asked again came from model calls the wire could not place "
        "inside a step or outside every one (counted as paid again)"
    )
