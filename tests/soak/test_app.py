"""`paidtwice soak --app`: a user's own agent soaked, its code unchanged: no header, names of its own, a JSON
input. The host tags each model request with its invocation, so the stub counts the calls per invocation."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support import run_paidtwice

from paidtwice._exceptions import UsageError
from paidtwice.lab import Lab
from paidtwice.report._soak import format_soak
from paidtwice.results import load_results, write_record
from paidtwice.soak import SoakOptions, soak, soak_target
from paidtwice.soak._bound import places_in_life, snapshot
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


def test_without_turns_in_order_a_call_s_place_is_its_order_since_the_restart() -> None:
    # One script turn answers every call: the second call of an invocation with one answer journaled when
    # the life began is its third answer, whatever its turn.
    calls = [_call("inv_a", 10.0), _call("inv_b", 10.1), _call("inv_a", 10.2), _call("inv_c", 10.3)]
    assert places_in_life(calls, {"inv_a": 1, "inv_b": None}) == [2, 1, 3, 1]
    taken = snapshot(calls, {"inv_a": 2, "inv_b": 1}, 11.0, 11.3, [2, 1, 3, 1])
    # inv_a's third answer and inv_c's first are not journaled: both count; by turn (all 1), only inv_c's.
    assert taken.bound == 2 and taken.invocations_lacking == 2
    assert snapshot(calls, {"inv_a": 2, "inv_b": 1}, 11.0, 11.3).bound == 1


def _call(invocation: str, started: float) -> ModelCall:
    return ModelCall("lane", invocation, 1, 1, 1, 1, Answer(text="x"), started, started + 0.1, True)


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
