"""Keyed services swept: a Virtual Object and a Workflow are called with a key, given or by default."""

from __future__ import annotations

import json
import re
import sys
import threading
from pathlib import Path

import pytest
from support import assert_eventually

from paidtwice.lab import Lab
from paidtwice.lab._watch import Watcher
from paidtwice.replay._journal import load_journal, save_with_prefix
from paidtwice.replay._replayer import load_app
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._runs import DEFAULT_KEY, SweepRun, clean_run, point_run
from paidtwice.sweep._sweep import SweepMatrix, _plan, sweep_targets
from paidtwice.targets import AppTarget
from paidtwice.testing import assert_replays

AGENT = Path(__file__).resolve().parent / "keyed_agent"


@pytest.fixture(scope="module")
def matrices(lab: Lab) -> dict[str, SweepMatrix]:
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


def test_a_points_agent_registers_its_own_service_alone(lab: Lab, matrices: dict[str, SweepMatrix]) -> None:
    """A point's agent is killed, then closed: had it registered the app's other services, the server would
    send the next call to one of them (Desk's to Rates, from another point) to a closed port, and that
    point would never settle. The whole app is registered by the clean runs alone."""
    point = re.compile(r"^(Counter|Trip|Chat|Desk)_s\d+_\d+_\w+_steady_\d+$")
    served = [{s["name"] for s in d.get("services", [])} for d in lab.admin.deployments()]
    points = [names for names in served if any(point.match(name) for name in names)]
    assert len(points) >= sum(len(m.points) for m in matrices.values())
    assert all(len(names) == 1 for names in points), [n for n in points if len(n) > 1][:1]
    cleans = [names for names in served if any(name.endswith("_steady_clean") for name in names)]
    assert cleans and all("Rates" in names for names in cleans)


def test_a_point_whose_call_cannot_run_says_so_at_once(lab: Lab) -> None:
    """A point's replay that waits on a call nothing can serve any more (the callee's deployment is gone)
    ends as soon as that is seen, as a kill it could not place, saying why; not after the settle timeout,
    and with no finished answer to judge."""
    target = AppTarget("agent:app", "Desk", "quote", "weather?", mode="Desk", cwd=str(AGENT))
    script = load_script_file(AGENT / "script.toml", "steady")
    watcher = Watcher(lambda: lab.sql, lab.cancelled)
    stop = threading.Event()
    tag = f"s{lab.next_id()}_0_gone"
    try:
        clean, run = clean_run(lab, stop, watcher, target, script, f"{tag}_clean")
        point = next(p for p in _plan(run) if p.kind == "model-returned")  # its replay calls Rates again
        # Another copy of the app registered last for Rates, then closed: the replay's call goes there.
        gone = SweepRun(lab, target, script, tag=f"{tag}_gone", gate=None)
        with gone.agent:
            gone.agent.start()
            lab.admin.register_deployment(gone.agent.uri)
        result = point_run(lab, stop, watcher, target, script, "steady", clean, point, tag=f"{tag}_1")
    finally:
        watcher.stop()
    assert not result.confirmed and result.status != "completed"
    assert "its run could not finish: the call to Rates/rate (inv_" in result.not_placed, result.not_placed
    assert "cannot run, nothing serves it any more" in result.not_placed
    # Ended by the sweep (killed: completed with a failure), not left retrying on the session's server.
    assert_eventually(
        lambda: (row := lab.sql.invocation(result.invocation_id)) is not None and row.status == "completed",
        timeout=60,
        what="the point's invocation ended",
    )
