"""An app written with restate-sdk 1.3.0's production options, swept with no configuration: its own retry
policies (which only discovery v4 describes) in force on the lab's server and named in every record, a
handler that returns None, and a private service swept in its caller's tree, never called alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from support import DEADLINE

from paidtwice.agent import agent_env
from paidtwice.results import PointResult, load_results, write_results
from paidtwice.watch import load_profile

AGENT = Path(__file__).resolve().parent / "options_agent"
APP = ["--app", "agent:app", "--app-dir", str(AGENT)]

_Run = Future[subprocess.CompletedProcess[str]]


def paidtwice(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paidtwice", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        timeout=DEADLINE,
    )


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("options")


@pytest.fixture(scope="module")
def started(work: Path) -> Iterator[tuple[_Run, _Run]]:
    """The zero-configuration sweep (one variation, to keep it short) and the private handler named alone,
    both started with the module."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        sweep = pool.submit(
            paidtwice,
            "sweep",
            *APP,
            "--variation",
            "steady",
            "--json",
            str(work / "sweep.json"),
            "--save-journals",
            str(work / "journals"),
        )
        alone = pool.submit(paidtwice, "sweep", *APP, "--handler", "Ledger/enter", "--variation", "steady")
        yield sweep, alone


@pytest.fixture(scope="module")
def points(started: tuple[_Run, _Run], work: Path) -> list[PointResult]:
    done = started[0].result()
    assert done.returncode == 0, done.stderr
    return list(load_results([work / "sweep.json"]).points)


def test_the_manifest_is_asked_for_as_the_server_asks_and_read_at_the_version_chosen() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice.agent.host", "agent:app", "--discover"],
        capture_output=True,
        text=True,
        cwd=AGENT,
        env=agent_env(openai_url="http://127.0.0.1:9/v1", anthropic_url="http://127.0.0.1:9"),
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])["manifest"]
    assert found["manifestVersion"] == 4
    desk = next(s for s in found["services"] if s["name"] == "Desk")
    assert desk["retryPolicyMaxAttempts"] == 40 and desk["inactivityTimeout"] == 45_000


def test_the_app_s_own_retry_policies_are_in_force_and_named_in_every_record(
    points: list[PointResult],
) -> None:
    policies: dict[tuple[str, str], set[str]] = {}
    for p in points:
        policies.setdefault((p.service, p.handler), set()).add(p.retry_policy)
    assert policies == {
        ("Desk", "assess"): {"first retry after 250ms, x2.0, at most 1m apart, 40 attempts, then pause"},
        # The handler's own settings over its service's.
        ("Desk", "note"): {"first retry after 100ms, x2.0, at most 1m apart, 30 attempts, then kill"},
    }
    assert all(p.confirmed and p.status == "completed" and p.answer_matches for p in points)


def test_a_handler_that_returns_none_is_swept_with_an_empty_answer(points: list[PointResult]) -> None:
    notes = [p for p in points if p.handler == "note"]
    assert notes and all(p.answer == "" for p in notes)


def test_a_private_service_is_swept_in_its_caller_s_tree_and_never_called_alone(
    started: tuple[_Run, _Run], points: list[PointResult]
) -> None:
    assert "not swept alone: Ledger/enter is private (ingress_private)" in started[0].result().stderr
    assert any(p.crash_point == "in flight: step write in Ledger/enter" for p in points)
    alone = started[1].result()
    assert alone.returncode == 2 and "Traceback" not in alone.stderr
    assert alone.stderr.strip().splitlines()[-1].endswith("sweep a handler that calls it"), alone.stderr


def test_replay_check_and_watch_read_what_the_sweep_left(points: list[PointResult], work: Path) -> None:
    (work / "paidtwice.toml").write_text(
        f'app-dir = "{AGENT}"\n[replay-check]\napp = "agent:app"\njournals = "journals/"\n'
    )
    done = paidtwice("check", "--only", "replay-check", cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every one replays" in done.stdout
    one = work / "note.json"
    write_results(one, [p for p in points if p.handler == "note"])
    profile = load_profile(one)
    assert (profile.service, profile.handler) == ("Desk", "note")
