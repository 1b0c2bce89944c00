"""The soak's bound at one kill, without a server: which calls of the dead life a replay pays again."""

from __future__ import annotations

import pytest

from paidtwice._exceptions import UsageError
from paidtwice.agent import AgentAttempt
from paidtwice.report import format_soak_progress
from paidtwice.results import KillSnapshot
from paidtwice.soak import SoakOptions, SoakProgress, soak_timeout
from paidtwice.soak._bound import AgentKill, snapshot
from paidtwice.soak._node_kills import NodeEvent, _cut_off
from paidtwice.stub._ledger import ModelCall
from paidtwice.stub._scripts import Answer

KILL = 100.0
BACK = 100.3


def _call(
    invocation: str, turn: int, started: float, finished: float | None, delivered: bool | None
) -> ModelCall:
    answer = Answer(text="x")
    return ModelCall("lane", invocation, turn, turn, 1, 1, answer, started, finished, delivered, agent=7)


def _kill(answers: dict[str, tuple[float, ...] | None]) -> AgentKill:
    """Process 7's kill at KILL, its replacement listening at BACK."""
    return AgentKill(pid=7, alive_since=90.0, killed_at=KILL, back_at=BACK, answers=answers)


def test_a_kill_costs_the_calls_whose_answer_the_journal_lacks() -> None:
    calls = [
        _call("inv_open", 1, 99.0, None, None),  # in flight at the kill
        _call("inv_late", 2, 100.1, 100.2, False),  # sent just before the kill, read by the stub after it
        _call("inv_answered", 2, 99.0, 99.5, True),  # answered, but the journal lacks it
        _call("inv_journaled", 1, 98.0, 98.5, True),  # answered and journaled: the replay reads it
        _call("inv_reasked", 1, 99.0, 99.2, True),  # asks again for turn 1, which the journal holds
        _call("inv_done", 2, 99.0, 99.1, True),  # completed before the kill
    ]
    answers: dict[str, tuple[float, ...] | None] = {
        "inv_open": (),
        "inv_late": (97.0,),
        "inv_answered": (95.0, 100.4),  # its second answer reached the journal after the replacement listened
        "inv_journaled": (98.6,),
        "inv_reasked": (98.0,),
        "inv_done": None,
    }
    taken = snapshot(calls, _kill(answers), [], by_order=False)
    assert taken == KillSnapshot(
        at=KILL, down=0.3, open_calls=2, unjournaled_answers=1, invocations_lacking=3
    )
    assert taken.bound == 3


def test_an_invocation_without_a_journaled_step_lacks_every_answer() -> None:
    taken = snapshot([_call("inv_new", 1, 99.9, None, None)], _kill({}), [], by_order=False)
    assert (taken.open_calls, taken.unjournaled_answers, taken.bound) == (1, 0, 1)


def test_progress_reads_as_one_line() -> None:
    line = format_soak_progress(
        SoakProgress(sent=10000, invocations=10000, completed=2500, kills=4, kills_planned=10, elapsed=100.0)
    )
    assert line == "soak: sent 10000/10000, completed 2500, kills 4/10, 25.0 completed/s, 100s"


def test_progress_counts_node_kills_on_a_cluster() -> None:
    line = format_soak_progress(
        SoakProgress(
            sent=300,
            invocations=400,
            completed=120,
            kills=1,
            kills_planned=1,
            elapsed=20.0,
            node_kills=1,
            node_kills_planned=2,
        )
    )
    assert line == "soak: sent 300/400, completed 120, kills 1/1, node kills 1/2, 6.0 completed/s, 20s"


def test_node_kills_each_get_a_wave_of_their_own() -> None:
    assert SoakOptions(invocations=200).waves() == (200,)
    assert SoakOptions(invocations=61, node_kills=3).waves() == (21, 20, 20)
    SoakOptions(invocations=60, kills=0, node_kills=3).check(cluster=3)
    with pytest.raises(UsageError, match="--node-kills 4 needs at least 80 invocations, not 60"):
        SoakOptions(invocations=60, kills=0, node_kills=4).check(cluster=3)
    with pytest.raises(UsageError, match="--node-kills needs a cluster"):
        SoakOptions(invocations=60, kills=0, node_kills=1).check(cluster=1)
    with pytest.raises(UsageError, match="a soak needs at least one invocation"):
        SoakOptions(invocations=0).check(cluster=1)


def test_the_deadline_grows_with_the_work_unless_given() -> None:
    assert SoakOptions(invocations=2000).deadline == soak_timeout(2000) == 260.0
    assert SoakOptions(invocations=60, node_kills=2).deadline == 60.0 + 6.0 + 120.0
    assert SoakOptions(invocations=2000, timeout=30.0).deadline == 30.0


class _Calls:
    """The stub's ledger of one lane, as the node kills' count reads it."""

    def __init__(self, calls: list[ModelCall]) -> None:
        self.calls = calls

    def model_calls(self, invocation_id: str | None = None) -> list[ModelCall]:
        return [c for c in self.calls if invocation_id in (None, c.invocation_id)]


def _attempt(at: float, last_event: str | None, model_requests: int) -> AgentAttempt:
    return AgentAttempt("inv", at, 7, 0, True, None, last_event=last_event, model_requests=model_requests)


def test_a_node_kill_cut_off_counts_the_calls_its_attempts_made_after_the_next_one_began() -> None:
    """The CI failure: a handler cut off by the node kill read a pause's end that had come before the kill,
    asked the model after the next attempt had started, and only then read the end of its stream. By time
    its call was the next attempt's, which ended well, so the bound missed it."""
    kill = NodeEvent("node-3", (), killed_at=5.0, back_at=7.0)
    first = _call("inv", 1, 1.0, 1.1, True)
    calls = [first, _call("inv", 2, 5.8, 5.9, True), _call("inv", 2, 6.3, 6.4, True)]
    attempts = [_attempt(0.5, None, 2), _attempt(5.7, "end", 1)]
    answers = {"inv": [1.2, 6.5]}  # the first call's answer, and the next attempt's
    assert _cut_off(_Calls(calls), attempts, [kill], answers) == [1]  # type: ignore[arg-type]
    # A cut-off attempt whose only request was journaled cost nothing; nor did one that asked nothing.
    journaled = [_attempt(0.5, None, 1), _attempt(5.7, None, 0), _attempt(6.0, "end", 1)]
    two = [first, _call("inv", 2, 6.3, 6.4, True)]
    assert _cut_off(_Calls(two), journaled, [kill], answers) == [0]  # type: ignore[arg-type]
    # A call paid again by an attempt that ended well is no kill's: the bound does not take it.
    well = [_attempt(0.5, "suspend", 1), _attempt(5.7, "end", 2)]
    assert _cut_off(_Calls(calls), well, [kill], answers) == [0]  # type: ignore[arg-type]
