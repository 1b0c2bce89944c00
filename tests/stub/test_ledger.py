"""The stub's ledger, without a server: numbering per lane and invocation, kept apart by its index."""

from __future__ import annotations

from paidtwice.stub._ledger import Ledger
from paidtwice.stub._scripts import Answer


def _answer(turn: int, ask: int, call: int) -> Answer:
    return Answer(text=f"turn {turn} ask {ask} call {call}")


def test_calls_are_numbered_per_lane_and_invocation() -> None:
    ledger = Ledger()
    for lane, invocation, turn in [
        ("a", "inv_1", 1),
        ("a", "inv_2", 1),
        ("a", "inv_1", 1),
        ("b", "inv_1", 1),
        ("a", "inv_1", 2),
    ]:
        slot = ledger.open_model_call(
            lane=lane, invocation_id=invocation, turn=turn, messages=1, answer_for=_answer
        )
        ledger.close_model_call(slot, delivered=True)
    first = ledger.model_calls("a", "inv_1")
    assert [(c.call, c.turn, c.ask) for c in first] == [(1, 1, 1), (2, 1, 2), (3, 2, 1)]
    assert [c.answer.text for c in first] == [
        "turn 1 ask 1 call 1",
        "turn 1 ask 2 call 2",
        "turn 2 ask 1 call 3",
    ]
    assert all(c.delivered for c in first)
    assert [(c.invocation_id, c.call) for c in ledger.model_calls("a")] == [
        ("inv_1", 1),
        ("inv_2", 1),
        ("inv_1", 2),
        ("inv_1", 3),
    ]
    assert [(c.lane, c.call, c.ask) for c in ledger.model_calls("b")] == [("b", 1, 1)]
    assert ledger.model_calls("c") == [] and ledger.model_calls("a", "inv_3") == []


def test_tool_runs_are_numbered_per_lane_and_invocation() -> None:
    ledger = Ledger()
    for lane, invocation in [("a", "inv_1"), ("a", "inv_1"), ("a", "inv_2"), ("b", "inv_1")]:
        slot = ledger.open_tool_run(
            lane=lane, invocation_id=invocation, tool="weather", arguments="city=Paris"
        )
        ledger.close_tool_run(slot, delivered=False)
    assert [t.call for t in ledger.tool_runs("a", "inv_1")] == [1, 2]
    assert [(t.invocation_id, t.call) for t in ledger.tool_runs("a")] == [
        ("inv_1", 1),
        ("inv_1", 2),
        ("inv_2", 1),
    ]
    assert [t.call for t in ledger.tool_runs("b")] == [1]
    assert not any(t.delivered for t in ledger.tool_runs("a"))
