"""Keyed services swept: a Virtual Object and a Workflow are called with a key, given or by default."""

from __future__ import annotations

import json
import re
import sys
import threading
from pathlib import Path

import pytest

from paidtwice.lab import Lab
from paidtwice.lab._poll import Poller
from paidtwice.replay._journal import load_journal, save_with_prefix
from paidtwice.replay._replayer import load_app
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._point import point_run
from paidtwice.sweep._runs import DEFAULT_KEY, SweepRun, clean_run
from paidtwice.sweep._sweep import SweepMatrix, _plan, sweep_targets
from paidtwice.targets import AppTarget
from paidtwice.testing import assert_replays

AGENT = Path(__file__).resolve().parent / "keyed_agent"


@pytest.fixture(scope="module")
def earlier(lab: Lab) -> set[str]:
    """The deployments registered before this module's sweep (other files share the session's lab)."""
    return {d["id"] for d in lab.admin.deployments()}


@pytest.fixture(scope="module")
def matrices(lab: Lab, earlier: set[str]) -> dict[str, SweepMatrix]:
    targets = [
        AppTarget("agent:app", "Counter", "tally", "weather?", mode="Counter", cwd=str(AGENT), key="k/1"),
        AppTarget("agent:app", "Trip", "run", "weather?", mode="Trip", cwd=str(AGENT)),
        AppTarget("agent:app", "Chat", "say", "weather?", mode="Chat", cwd=str(AGENT), key="k/2"),
        AppTarget("agent:app", "Desk", "quote", "weather?", mode="Desk", cwd=str(AGENT)),
    ]
    script = load_script_file(AGENT / "script.toml", "steady")
    return {m.mode: m for m in sweep_targets(lab, targets=targets, scripts=[("steady", script)])}


@pytest.mark.parametrize(("service", "key"), [("Counter", "k/1"), ("Trip", DEFAULT_KEY), ("Chat", "k/2")])
def test_a_keyed_service_is_swept_with_its_key(
    matrices: dict[str, SweepMatrix], service: str, key: str
) -> None:
    matrix = matrices[service]
    assert matrix.clean.answer == json.dumps(f"{key}: FINE WEATHER")
    assert matrix.clean.model_calls == 1
    kinds = [p.kind for p in matrix.points]
    assert "in-flight-model" in kinds and "model-returned" in kinds
    for point in matrix.points:
        assert point.confirmed, point.crash_point
        assert point.status == "completed" and point.answer_matches, point.crash_point
    # The model call is outside the journal: once its answer came back, every later kill pays it again.
    returned = [p for p in matrix.points if p.kind == "model-returned"]
    assert all(p.extra_model_calls == 1 for p in returned)


def test_an_object_that_keeps_its_conversation_in_state_lands_every_kill(
    matrices: dict[str, SweepMatrix],
) -> None:
    # Its state's commands are in the journal: the points count them, and every kill lands where it says.
    matrix = matrices["Chat"]
    state = [e for e in matrix.clean.journal if "State" in e]
    assert state == ["Command: GetEagerState", "Command: SetState"]
    names = [p.crash_point for p in matrix.points]
    assert "after entry 3 (Notification: Run)" in names, names  # the moment before the state is written
    assert all(p.confirmed for p in matrix.points), names


def test_a_handler_that_calls_another_service_lands_every_kill(matrices: dict[str, SweepMatrix]) -> None:
    # The call's command, the callee's invocation id and its result are journal entries the points count.
    matrix = matrices["Desk"]
    assert matrix.clean.answer == json.dumps("desk: FINE WEATHER X1.08")
    names = [p.crash_point for p in matrix.points]
    assert "after entry 3 (Notification: Call)" in names, names  # the call returned, the step not begun
    assert all(p.confirmed for p in matrix.points), names
    returned = [p for p in matrix.points if p.kind == "model-returned"]
    assert len(returned) == 1 and returned[0].extra_model_calls == 1


def test_saved_journals_name_the_service_as_its_code_does_and_replay_offline(
    lab: Lab, matrices: dict[str, SweepMatrix], tmp_path: Path
) -> None:
    for service, matrix in matrices.items():
        for point in matrix.points:
            save_with_prefix(
                lab.sql,
                tmp_path,
                f"{service}-{point.order:02d}",
                point.invocation_id,
                point.journal_at_kill,
                service=point.service,
            )
    saved = [load_journal(path) for path in sorted(tmp_path.glob("*.json"))]
    assert {journal.service for journal in saved} == set(matrices)
    assert {journal.key for journal in saved} == {"k/1", "k/2", DEFAULT_KEY, None}
    # The file named by the code's service replays against that code, matched by `when` in the script file
    # (the handlers' one model call is asked again on every replay).
    results = assert_replays("agent:app", saved, app_dir=AGENT, script=AGENT / "script.toml")
    assert {r.verdict for r in results} <= {"replays", "continues"}
    assert any(r.verdict == "replays" for r in results)


def test_two_apps_of_one_module_name_load_each_from_its_own_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "paidtwice-stub")  # the travel agent makes its client on import
    travel = Path(__file__).resolve().parents[2] / "examples" / "travel_agent"
    keyed_first = load_app("agent:app", app_dir=AGENT)
    travel_next = load_app("agent:app", app_dir=travel)
    keyed_again = load_app("agent:app", app_dir=AGENT)
    assert keyed_first is not travel_next
    assert sys.modules["agent"].__file__ == str(AGENT / "agent.py")
    assert keyed_again is not travel_next


def test_a_points_agent_registers_the_apps_services_as_its_own(
    lab: Lab, earlier: set[str], matrices: dict[str, SweepMatrix]
) -> None:
    """A point's agent is killed, then closed: had it registered the app's other services under the names
    other runs call, the server would send their next call (Desk's to Rates) to a closed port. Each run
    serves every service of the app under its own tag (the invocation tree, `paidtwice.agent._tree`), so a
    run's calls reach only its own process."""
    point = re.compile(r"^(Counter|Trip|Chat|Desk|Rates)_(s\d+_\d+_\w+_steady_\d+)$")
    ours = [d for d in lab.admin.deployments() if d["id"] not in earlier]
    served = [{s["name"] for s in d.get("services", [])} for d in ours]
    points = [names for names in served if any(point.match(name) for name in names)]
    assert len(points) >= sum(len(m.points) for m in matrices.values())
    for names in points:
        tags = {m.group(2) for m in map(point.match, names) if m}
        assert len(tags) == 1 and len(names) > 1 and any(n.startswith("Rates_") for n in names), names


def test_a_copy_registered_later_does_not_take_a_points_calls(lab: Lab) -> None:
    """Another copy of the app, registered after a point's agent and then closed, does not take the point's
    call to its tool service: the point's calls go to the run's own copy (its tree), and it completes."""
    target = AppTarget("agent:app", "Desk", "quote", "weather?", mode="Desk", cwd=str(AGENT))
    script = load_script_file(AGENT / "script.toml", "steady")
    poller = Poller(lambda: lab.sql, lab.cancelled)
    stop = threading.Event()
    tag = f"s{lab.next_id()}_0_gone"
    try:
        clean, run = clean_run(lab, stop, poller, target, script, f"{tag}_clean")
        point = next(p for p in _plan(run) if p.kind == "model-returned")  # its replay calls Rates again
        gone = SweepRun(lab, target, script, tag=f"{tag}_gone", gate=None)
        with gone.agent:
            gone.agent.start()
            lab.admin.register_deployment(gone.agent.uri)
        result = point_run(lab, stop, poller, target, script, "steady", clean, point, tag=f"{tag}_1")
    finally:
        poller.stop()
    assert result.confirmed and result.status == "completed" and result.answer_matches, result.not_placed
