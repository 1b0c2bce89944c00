"""An agent written with the official `openai` client (examples/travel_agent), recorded on the real server
and replayed offline: its model calls reach the stub, answered from its script file."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import assert_eventually

from paidtwice.lab import Lab
from paidtwice.replay import JournalFile, Replayer, capture_journal
from paidtwice.stub._turns import load_script_file
from paidtwice.targets import AgentHost

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "travel_agent"
SCRIPT = EXAMPLE / "script.toml"


@pytest.fixture(scope="module")
def travel_journal(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> JournalFile:
    lane = lab.stub.open_lane(load_script_file(SCRIPT, "steady"))
    env = {**os.environ, "OPENAI_BASE_URL": lane.base_url, "OPENAI_API_KEY": "paidtwice-stub"}
    workdir = tmp_path_factory.mktemp("travel")
    with AgentHost(
        target="agent:app", env=env, workdir=workdir, cwd=EXAMPLE, forkserver=lab.forkserver
    ) as agent:
        agent.start()
        lab.admin.register_deployment(agent.uri)
        invocation = lab.ingress.send("Travel", "quote", "How much is 120 EUR in USD?")

        def completed() -> bool:
            row = lab.sql.invocation(invocation)
            return row is not None and row.status == "completed"

        assert_eventually(completed, timeout=60, what="the travel agent's invocation to complete")
        return capture_journal(lab.sql, invocation)


@pytest.fixture(scope="module")
def replayers() -> Iterator[dict[str, Replayer]]:
    found = {}
    try:
        for variation in ("steady", "changed"):
            replayer = Replayer("agent:app", app_dir=EXAMPLE, script=SCRIPT, variation=variation)
            found[variation] = replayer.start()
        yield found
    finally:
        for replayer in found.values():
            replayer.close()


def test_steady_answers_replay_and_both_model_calls_are_paid_again(
    replayers: dict[str, Replayer], travel_journal: JournalFile
) -> None:
    assert [e.name for e in travel_journal.entries if e.type == "Command: Run"] == ["convert"]
    result = replayers["steady"].replay_journal(travel_journal)
    assert result.verdict == "replays"
    assert [(c.turn, c.ask, c.during_replay) for c in result.outside_calls] == [(1, 2, True), (2, 2, True)]
    assert all("/chat/completions" in c.url for c in result.outside_calls)


def test_a_changed_first_answer_diverges_where_the_conversion_was_recorded(
    replayers: dict[str, Replayer], travel_journal: JournalFile
) -> None:
    result = replayers["changed"].replay_journal(travel_journal, raise_on_divergence=False)
    assert result.verdict == "diverges" and result.index == 1
    assert (result.recorded, result.attempted) == ("run convert", "handler return")
    assert result.calls_during_replay == 1
