"""The soak's bound at one kill, without a server: which calls of the dead life a replay pays again."""

from __future__ import annotations

import pytest

from paidtwice._exceptions import UsageError
from paidtwice.report import format_soak_progress
from paidtwice.results import KillSnapshot
from paidtwice.soak import SoakOptions, SoakProgress, soak_timeout
from paidtwice.soak._bound import snapshot
from paidtwice.stub._ledger import ModelCall
from paidtwice.stub._scripts import Answer

KILL = 100.0
BACK = 100.3


def _call(
    invocation: str, turn: int, started: float, finished: float | None, delivered: bool | None
) -> ModelCall:
    return ModelCall("lane", invocation, turn, turn, 1, 1, Answer(text="x"), started, finished, delivered)


def test_a_kill_costs_the_calls_whose_answer_the_journal_lacks() -> None:
    calls = [
        _call("inv_open", 1, 99.0, None, None),  # in flight at the kill
        _call("inv_late", 2, 100.1, 100.2, False),  # sent just before the kill, read by the stub after it
        _call("inv_answered", 2, 99.0, 99.5, True),  # answered, but the journal lacks it
        _call("inv_journaled", 1, 98.0, 98.5, True),  # answered and journaled: the replay reads it
        _call("inv_reasked", 1, 99.0, 99.2, True),  # asks again for turn 1, which the journal holds
        _call("inv_done", 2, 99.0, 99.1, True),  # completed before the kill
    ]
    answers: dict[str, int | None] = {
        "inv_open": 0,
        "inv_late": 1,
        "inv_answered": 1,
        "inv_journaled": 1,
        "inv_reasked": 1,
        "inv_done": None,
    }
    taken = snapshot(calls, answers, KILL, BACK)
    assert taken == KillSnapshot(
        at=KILL, down=0.3, open_calls=2, unjournaled_answers=1, invocations_lacking=3
    )
    assert taken.bound == 3


def test_an_invocation_without_a_journaled_step_lacks_every_answer() -> None:
    taken = snapshot([_call("inv_new", 1, 99.9, None, None)], {}, KILL, BACK)
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
