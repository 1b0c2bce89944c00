"""Server-free checks of where `--cmd` places a model call: inside a step only when the wire proves it (the
step had begun when the answer went back, and its result carries the answer), never by which step's result
passed the proxy next; a call the wire cannot place either way is counted outside the journal, and the
points that asked it again say they are undecided."""

from __future__ import annotations

import json

from paidtwice.agent import WireStep
from paidtwice.results import CleanRun
from paidtwice.stub import ModelCall, answer_marks
from paidtwice.stub._scripts import Answer, ToolCall
from paidtwice.sweep._paid import calls_at_kill, undecided_why
from paidtwice.targets._wire_timeline import place_call, wire_model_calls_in_steps

WORDS = Answer(text="Pack a light jacket for Paris.")
TOOL = Answer(text="", tool_call=ToolCall("convert", json.dumps({"amount": 120, "source": "EUR"})))


def call(n: int, answer: Answer, started: float, replied: float, turn: int = 1) -> ModelCall:
    return ModelCall("lane", "inv", n, turn, 1, 1, answer, started, replied + 0.001, True, replied=replied)


def step(name: str, commanded: float, proposed: float, value: object) -> WireStep:
    return WireStep(name, 1, commanded, proposed, json.dumps(value))


def test_a_plain_call_before_a_journaled_step_is_outside_the_journal() -> None:
    """The travel agent's shape: ask, then run the tool the model chose as a step (no model call in it). Its
    result passes the proxy next, with no other call between: that step does not hold the call."""
    asked = call(1, TOOL, started=1.0, replied=1.01)
    tool = step("convert", commanded=1.02, proposed=1.03, value={"amount": 129.6, "currency": "USD"})
    assert place_call(asked, [tool]) == (None, True)
    # A step that keeps only a count of the answer's words, the same.
    words = call(1, WORDS, started=1.0, replied=1.01)
    assert place_call(words, [step("stamp", 1.02, 1.03, {"words": 6})]) == (None, True)


def test_a_call_made_in_a_step_whose_result_carries_its_answer_is_journaled() -> None:
    asked = call(1, TOOL, started=1.0, replied=1.01)
    message = {
        "role": "assistant",
        "tool_calls": [{"id": "call_" + answer_marks(asked)[0], "type": "function"}],
    }
    journaled = step("ask", commanded=0.99, proposed=1.02, value=message)
    assert place_call(asked, [journaled]) == (journaled, True)
    words = call(2, WORDS, started=2.0, replied=2.01)
    text = step("ask", commanded=1.99, proposed=2.02, value=WORDS.text)
    assert place_call(words, [journaled, text]) == (text, True)
    assert wire_model_calls_in_steps([journaled, text], [asked, words]) == ((1, 2), ())


def test_what_the_wire_cannot_prove_is_undecided_and_counted_outside() -> None:
    # Answered while a step ran whose result keeps nothing of it (a part of the answer, or a call made
    # beside the step): undecided.
    beside = call(1, WORDS, started=1.0, replied=1.01)
    running = step("other", commanded=0.9, proposed=1.2, value={"ok": True})
    assert place_call(beside, [running]) == (running, False)
    # A later step repeats the answer it was given (or an SDK sent the step's command with its result).
    echoed = step("save", commanded=1.05, proposed=1.06, value={"saved": WORDS.text})
    assert place_call(beside, [echoed]) == (None, False)
    assert wire_model_calls_in_steps([echoed], [beside]) == ((), (1,))


def test_three_journaled_calls_at_once_then_a_fourth_are_all_journaled() -> None:
    """workflow-parallel: three steps started together, each asking the model, one answered before the
    others began (a fast stub); then a fourth. The old rule filed by "no other call between" and lost one."""
    answers = [Answer(text=f"The view number {n}: fine.") for n in (1, 2, 3, 4)]
    calls = [
        call(1, answers[0], started=1.00, replied=1.001),
        call(2, answers[1], started=1.002, replied=1.003, turn=2),
        call(3, answers[2], started=1.004, replied=1.005, turn=3),
        call(4, answers[3], started=2.0, replied=2.01, turn=4),
    ]
    steps = [
        step("view one", 0.99, 1.006, answers[0].text),
        step("view two", 0.99, 1.007, answers[1].text),
        step("view three", 0.99, 1.008, answers[2].text),
        step("combine", 1.99, 2.02, answers[3].text),
    ]
    assert wire_model_calls_in_steps(steps, calls) == ((1, 2, 3, 4), ())


def test_a_point_that_asks_an_undecided_call_again_says_so() -> None:
    before = call(1, WORDS, started=1.0, replied=1.01)
    again = call(2, WORDS, started=5.0, replied=5.01)
    clean = CleanRun("completed", "a", 1, (), (), "inv", 0, model_turns=(1,), calls_undecided=(1,))
    at_kill = calls_at_kill([before, again], 3.0, clean)
    assert (at_kill.asked_again, at_kill.undecided) == (1, 1)
    assert "could not place" in undecided_why(at_kill)
    decided = calls_at_kill(
        [before, again], 3.0, CleanRun("completed", "a", 1, (), (), "inv", 0, model_turns=(1,))
    )
    assert (decided.asked_again, decided.undecided, undecided_why(decided)) == (1, 0, "")
