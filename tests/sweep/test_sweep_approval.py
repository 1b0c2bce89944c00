"""Human in the loop swept: a handler waiting on an awakeable (alone, or raced against a timeout) and a
Workflow waiting on a promise its shared handler resolves. The sweep resolves each, so the clean run completes
and "waiting for the approval" is a crash point of its own; a handler waiting on what nothing resolves ends
at once with one line saying what it waits for."""

from __future__ import annotations

import functools
import json
import subprocess
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from support import run_paidtwice

from paidtwice.engine import epoch
from paidtwice.lab import Lab
from paidtwice.stub._turns import ScriptFileError, load_script_file
from paidtwice.sweep._approvals import Resolution
from paidtwice.sweep._sweep import SweepMatrix, sweep_targets
from paidtwice.targets import AppTarget

AGENT = Path(__file__).resolve().parent / "approval_agent"
QUICK = Resolution(after=0.0)
"""No delay past the moment the handler awaits: a point's own wait is held until its kill, and a wait
raced against a timer is answered only once the timer's Sleep is sent (the plan holds it)."""


def _target(service: str, handler: str, mode: str, resolution: Resolution = QUICK) -> AppTarget:
    return AppTarget(
        "agent:app", service, handler, "refund order 42", mode=mode, cwd=str(AGENT), resolution=resolution
    )


@pytest.fixture(scope="module")
def matrices(lab: Lab) -> dict[str, SweepMatrix]:
    targets = [
        _target("Approval", "refund", "awakeable"),
        _target("Approval", "refund_naive", "awakeable naive"),
        _target("Approval", "refund_reviewed", "sent out by a step"),
        _target("Approval", "refund_reviewed_naive", "sent out by a step, naive"),
        _target("Approval", "refund_by_noon", "raced"),
        _target("Approval", "refund_by_noon", "raced, never resolved", Resolution(never=True)),
        _target("Review", "run", "promise"),
    ]
    script = load_script_file(AGENT / "script.toml", "steady")
    return {m.mode: m for m in sweep_targets(lab, targets=targets, scripts=[("steady", script)])}


def _resolves(label: str) -> bool:
    return "Signal" in label or "Promise" in label


def _waiting(matrix: SweepMatrix) -> list[str]:
    return [p.crash_point for p in matrix.points if p.kind == "waiting"]


@pytest.mark.parametrize("mode", ["awakeable", "sent out by a step", "raced", "promise"])
def test_the_approval_is_resolved_and_waiting_for_it_is_a_crash_point(
    matrices: dict[str, SweepMatrix], mode: str
) -> None:
    matrix = matrices[mode]
    # The value is one valid against the awakeable's (the promise's) type: a Decision, approved or not.
    assert matrix.clean.answer is not None
    assert json.loads(matrix.clean.answer).startswith("refund drafted ("), matrix.clean.answer
    assert "no answer in time" not in matrix.clean.answer
    assert len(_waiting(matrix)) == 1, [p.crash_point for p in matrix.points]
    for point in matrix.points:
        # Every point placed: a wait raced against a timer is planned with the timer's Sleep journaled.
        assert point.confirmed, (point.crash_point, point.not_placed)
        assert point.status == "completed" and point.answer_matches, (point.crash_point, point.answer)
        # Journaled before the approval: no kill pays the model again (--check exits 0).
        assert not point.pays_twice, point.crash_point
    waiting = next(p for p in matrix.points if p.kind == "waiting")
    # The kill landed while the handler waited: the approval was resolved, and journaled, after it.
    [resolved] = [e for e in waiting.journal if e.type.startswith("Notification") and _resolves(e.label())]
    assert waiting.started_at is not None and waiting.killed_at is not None
    assert (epoch(resolved.appended_at) or 0.0) > waiting.started_at + waiting.killed_at, waiting.journal


@pytest.mark.parametrize("mode", ["awakeable naive", "sent out by a step, naive"])
def test_the_naive_twin_pays_its_model_call_again_when_killed_waiting(
    matrices: dict[str, SweepMatrix], mode: str
) -> None:
    matrix = matrices[mode]
    waiting = next(p for p in matrix.points if p.kind == "waiting")
    assert waiting.confirmed and waiting.status == "completed" and waiting.answer_matches
    # Its draft came back outside the journal before the wait: the replay asks the model again (--check: 1).
    assert waiting.pays_twice and waiting.answers_asked_again == 1 and waiting.extra_model_calls == 1


def test_a_timeout_raced_against_the_approval_is_swept_both_ways(matrices: dict[str, SweepMatrix]) -> None:
    never = matrices["raced, never resolved"]
    assert never.clean.answer is not None and "no answer in time" in never.clean.answer
    # Nothing resolves it: the timer wins, and waiting for it is the durable pause.
    assert [p.kind for p in never.points].count("pause") == 1
    assert not _waiting(never)
    for point in never.points:
        assert point.confirmed and point.answer_matches and not point.pays_twice, point.crash_point


_Done = subprocess.CompletedProcess[str]


def _sweep_cli(*args: str) -> _Done:
    return run_paidtwice(
        "sweep", "--app", "agent:app", "--app-dir", str(AGENT), "--script", str(AGENT / "script.toml"),
        "--variation", "steady", "--input", '"refund order 42"', "--restart-delay", "0.2", *args,
    )  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Future[_Done]]]:
    """Every `paidtwice sweep` this file runs as a user does, started at once with the module (each on a
    server of its own, waiting on its own agents), beside the sweep on the session's server; each test reads
    its run's result. Each run writes its records to `records(name)`."""
    out = tmp_path_factory.mktemp("approval")
    runs: dict[str, Callable[[], _Done]] = {
        "untyped": functools.partial(
            _sweep_cli, "--service", "Approval", "--handler", "refund_untyped",
            "--json", str(out / "untyped.json"),
        ),
        "others": functools.partial(
            _sweep_cli, "--handler", "Approval/refund_reviewed", "--handler", "Approval/refund_untyped",
            "--check", "--json", str(out / "others.json"),
        ),
        "naive twin": functools.partial(
            _sweep_cli, "--service", "Approval", "--handler", "refund_reviewed_naive", "--check",
            "--json", str(out / "naive_twin.json"),
        ),
        "bad resolve": functools.partial(
            _sweep_cli, "--service", "Approval", "--handler", "refund", "--resolve", "{yes"
        ),
        # Restate's tour-of-agents human approval, both forms in one sweep: no script, no input.
        "claims": functools.partial(
            run_paidtwice, "sweep", "--app", "agents_app:app", "--app-dir", str(AGENT),
            "--handler", "ClaimDurable/run", "--handler", "ClaimPlain/run", "--variation", "steady",
            "--check", "--json", str(out / "claims.json"),
        ),
    }  # fmt: skip
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        yield {name: pool.submit(run) for name, run in runs.items()}


def _records(done: subprocess.CompletedProcess[str]) -> Any:
    """The records a run wrote with --json."""
    return json.loads(Path(done.args[done.args.index("--json") + 1]).read_text())


def test_a_handler_waiting_on_what_nothing_resolves_ends_at_once_with_one_line(
    cli: dict[str, Future[_Done]],
) -> None:
    done = cli["untyped"].result()
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith("answers:")]
    problem = [line for line in lines if "waits for" in line]
    assert len(problem) == 1, done.stderr
    assert "awakeable sign_" in problem[0] and "--resolve JSON" in problem[0], problem
    assert "not one waiting" not in done.stderr and "Traceback" not in done.stderr
    # Ended on its own, not on the settle timeout (a wall time would say so only on an idle machine).
    assert "did not finish" not in done.stderr


def test_one_handler_waiting_on_nothing_does_not_stop_the_others(cli: dict[str, Future[_Done]]) -> None:
    done = cli["others"].result()
    # The swept handler's points all ran and none pays twice; the other is said not swept, and why.
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    records = _records(done)
    points = records if isinstance(records, list) else records["points"]
    assert {p["handler"] for p in points} == {"refund_reviewed"}, points
    assert any(p["crash_point"] == "waiting for the awakeable" for p in points)
    [line] = [line for line in done.stderr.splitlines() if "could not sweep" in line]
    assert line.startswith("Approval/refund_untyped (steady): could not sweep, because"), line
    assert "awakeable sign_" in line and "--resolve JSON" in line, line
    assert "refund_untyped" not in done.stdout


def test_check_exits_1_on_the_naive_twin_and_names_the_repaid_call(cli: dict[str, Future[_Done]]) -> None:
    done = cli["naive twin"].result()
    assert done.returncode == 1, done.stderr
    assert "paid twice" in done.stderr
    assert "waiting for the awakeable" in done.stdout
    # The repaid call is named: its point pays the model call again outside the journal.
    summary = [
        line for line in done.stdout.splitlines() if line.startswith("Approval/refund_reviewed_naive:")
    ]
    assert summary and "paid again outside flight" in summary[0], done.stdout


def test_a_bad_resolve_is_one_line_before_anything_starts(cli: dict[str, Future[_Done]]) -> None:
    done = cli["bad resolve"].result()
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--resolve is neither JSON nor 'never'" in done.stderr.strip().splitlines()[-1]


def test_awakeable_values_are_read_from_the_script_file(tmp_path: Path) -> None:
    path = tmp_path / "script.toml"
    path.write_text(
        '[[turn]]\ntext = "ok"\n\n[[awakeable]]\nvalue = { approved = false, reviewer = "bo" }\n\n'
        "[[awakeable]]\nvalue = true\n"
    )
    script = load_script_file(path, "steady")
    assert [json.loads(v) for v in script.awakeables] == [{"approved": False, "reviewer": "bo"}, True]
    path.write_text('[[turn]]\ntext = "ok"\n\n[[awakeable]]\nanswer = 1\n')
    with pytest.raises(ScriptFileError, match=r"\[\[awakeable\]\] is a table with one key, `value`"):
        load_script_file(path, "steady")


@pytest.mark.parametrize(("handler", "pays"), [("ClaimDurable/run", False), ("ClaimPlain/run", True)])
def test_restates_example_on_the_agents_sdk_swept_with_nothing_named(
    cli: dict[str, Future[_Done]], handler: str, pays: bool
) -> None:
    # Restate's tour-of-agents human approval: no script, no input; the awakeable resolved as a string. Both
    # forms are swept at once: --check exits 1 for the plain Runner's, and says of each whether it pays twice.
    done = cli["claims"].result()
    assert done.returncode == 1, done.stderr
    points = [p for p in _records(done) if p["mode"] == handler]
    names = [p["crash_point"] for p in points]
    assert "waiting for the awakeable" in names and "in flight: step Request review" in names, names
    assert all(p["confirmed"] for p in points), [(p["crash_point"], p["not_placed"]) for p in points]
    [line] = [line for line in done.stdout.splitlines() if line.startswith(f"{handler}: ")]
    if pays:
        # The plain Runner's first answer came back outside the journal: the waiting point asks for it again.
        waiting = next(p for p in points if p["crash_point"] == "waiting for the awakeable")
        assert waiting["answers_asked_again"] >= 1, waiting
        assert "paid again outside flight" in line, done.stdout
    else:
        assert ", none pays twice" in line, done.stdout
