"""`paidtwice soak --app`: a user's own agent soaked, its code unchanged: no header, names of its own, a JSON
input. The host tags each model request with its invocation, so the stub counts the calls per invocation."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support import run_paidtwice

from paidtwice._exceptions import UsageError
from paidtwice.agent import AgentAttempt
from paidtwice.lab import Lab
from paidtwice.report._soak import format_soak
from paidtwice.results import load_results, write_record
from paidtwice.soak import SoakOptions, soak, soak_target
from paidtwice.soak._bound import AgentKill, snapshot
from paidtwice.stub._ledger import ModelCall
from paidtwice.stub._scripts import Answer
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._runs import NO_MODEL_CALL

ROOT = Path(__file__).resolve().parents[2]
AGENTS = ROOT / "tests" / "agents"
CLIENTS = ROOT / "tests" / "sweep" / "clients"
KEYED = ROOT / "tests" / "sweep" / "keyed_agent"
SCRIPT = AGENTS / "concierge.toml"
APP = ("--app", "concierge:app", "--service", "Concierge")
TRIP = {"city": "Lisbon", "pause": 2, "asks": 2}
"""Two model calls per invocation, both answered by the script's one turn: the bound cannot go by turns."""


def test_a_journaled_user_agent_loses_nothing_and_stays_within_the_bound(lab: Lab, tmp_path: Path) -> None:
    target = soak_target("concierge:app", "Concierge", "plan", TRIP, app_dir=AGENTS)
    record = soak(lab, SoakOptions(invocations=200, kills=2), target=target, script=load_script_file(SCRIPT))
    assert record.sent == 200 and record.completed == 200
    assert record.lost == 0 and record.unfinished == 0 and record.gave_up is None
    # Measured on the clean invocation: two model calls, journaled in the steps the agent names.
    assert record.clean_model_calls == 2 and record.model_steps == ("advice 1", "advice 2")
    assert record.clean_tool_runs == 0 and record.extra_tool_runs == 0  # a user's app: model calls only
    assert len(record.kill_snapshots) == 2
    assert any(kill.running for kill in record.kill_snapshots)  # the kills landed in running invocations
    assert record.model_calls >= 400
    assert 0 <= record.extra_model_calls <= record.bound
    assert record.ok
    assert record.app == "concierge:app Concierge/plan"
    assert "tool runs: not counted" in format_soak(record)
    write_record(tmp_path / "soak.json", record)
    assert load_results([tmp_path / "soak.json"]).soaks == (record,)  # `paidtwice report` reads it whole


def test_its_naive_twin_pays_again_within_the_bound(lab: Lab) -> None:
    target = soak_target("concierge:app", "ConciergeNaive", "plan", TRIP, app_dir=AGENTS)
    record = soak(lab, SoakOptions(invocations=200, kills=2), target=target, script=load_script_file(SCRIPT))
    assert record.completed == 200 and record.lost == 0 and record.unfinished == 0
    assert record.clean_model_calls == 2 and record.model_steps == ()  # nothing of the model journaled
    # Each replay asks again: the extras are real, and the kills cut off at least as many.
    assert 0 < record.extra_model_calls <= record.bound


def test_a_workflow_gets_a_key_per_invocation(lab: Lab) -> None:
    # One key for all would run the workflow once and refuse (or attach) the other 19.
    target = soak_target("agent:app", "Trip", "run", "Where to?", app_dir=KEYED)
    record = soak(
        lab,
        SoakOptions(invocations=20, kills=1),
        target=target,
        script=load_script_file(KEYED / "script.toml"),
    )
    assert record.sent == 20 and record.completed == 20 and record.lost == 0 and record.unfinished == 0
    assert record.clean_model_calls == 1


def test_a_key_for_a_plain_service_is_refused_before_the_soak(lab: Lab) -> None:
    target = soak_target("concierge:app", "Concierge", "plan", TRIP, key="trip", app_dir=AGENTS)
    with pytest.raises(UsageError, match="--key goes with a Virtual Object or a Workflow; Concierge is a"):
        soak(lab, SoakOptions(invocations=10, kills=1), target=target, script=load_script_file(SCRIPT))


def test_an_app_whose_calls_never_reach_the_stub_is_refused_before_the_soak(lab: Lab) -> None:
    target = soak_target("unreachable_agent:app", "UnreachableAgent", "quote", "Hi", app_dir=CLIENTS)
    with pytest.raises(UsageError) as raised:
        soak(
            lab,
            SoakOptions(invocations=50, kills=1),
            target=target,
            script=load_script_file(CLIENTS / "script.toml"),
        )
    assert str(raised.value) == NO_MODEL_CALL


def test_a_kill_counts_its_own_process_s_calls_whenever_the_stub_read_them() -> None:
    # Process 7 served from 10.0 and was killed at 20.0; 8 listened at 21.0. The stub read inv_a's second
    # call after 8 listened (a busy stub), and 8's first call before it (a busy clock): each counts for the
    # process that asked.
    calls = [
        _call("inv_a", 12.0, agent=7),
        _call("inv_a", 21.5, agent=7, finished=None),
        _call("inv_b", 13.0, agent=7),
        _call("inv_b", 20.9, agent=8),
        _call("inv_c", 14.0, agent=7),
    ]
    kill = AgentKill(
        pid=7,
        alive_since=10.0,
        killed_at=20.0,
        back_at=21.0,
        # inv_a's first answer is journaled; inv_b had one answer from before 7 served and none since; inv_c
        # completed before the kill.
        answers={"inv_a": (12.5,), "inv_b": (5.0,), "inv_c": None},
    )
    # Each invocation's first attempt in process 7; 8's attempt of inv_a began after its answer was journaled.
    began = [("inv_a", 11.0, 7), ("inv_b", 12.5, 7), ("inv_c", 13.5, 7), ("inv_a", 21.2, 8)]
    attempts = [AgentAttempt(invocation, at, pid, 0, True, None) for invocation, at, pid in began]
    taken = snapshot(calls, kill, attempts, by_order=True)
    assert (taken.open_calls, taken.unjournaled_answers, taken.invocations_lacking) == (1, 1, 2)
    assert taken.bound == 2 and taken.down == 1.0


def _call(invocation: str, started: float, *, agent: int = 1, finished: float | None = -1.0) -> ModelCall:
    ended = started + 0.1 if finished == -1.0 else finished
    return ModelCall(
        "lane", invocation, 1, 1, 1, 1, Answer(text="x"), started, ended, ended is not None, agent=agent
    )


def _soak_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_paidtwice("soak", *args, cwd=ROOT)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--app", "concierge:app", "--handler", "plan"],
            "--handler plan: name its service (--handler SERVICE/plan, or --service)",
        ),
        (
            [*APP, "--handler", "nope", "--script", str(SCRIPT)],
            "service 'Concierge' has no handler 'nope' (handlers: plan)",
        ),
        (
            [*APP, "--handler", "plan", "--input", "{", "--script", str(SCRIPT)],
            "--input is not JSON",
        ),
        (["--service", "Concierge"], "--service, --handler, --input, --key and --script go with --app"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_anything_starts(args: list[str], says: str) -> None:
    done = _soak_cli(*args, "--app-dir", str(AGENTS))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_an_app_whose_calls_never_reach_the_stub_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = _soak_cli(
        "--app",
        "unreachable_agent:app",
        "--app-dir",
        str(CLIENTS),
        "--service",
        "UnreachableAgent",
        "--handler",
        "quote",
        "--input",
        '"How much is 120 EUR in USD?"',
        "--script",
        str(CLIENTS / "script.toml"),
        "--json",
        str(tmp_path / "soak.json"),
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(NO_MODEL_CALL), done.stderr
    assert not (tmp_path / "soak.json").exists()  # refused before the soak: nothing was sent to soak
