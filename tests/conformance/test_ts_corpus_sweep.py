"""Each TypeScript conformance corpus app (tests/conformance/ts_apps) as a new user runs it, with nothing but
`--cmd`: every handler reachable from the ingress found and swept (its input made from its zod schema, its
fixed port moved to the run's own), every kill placed, nothing paid twice. Every sweep starts with the
module, at once, on the session's server, one variation each."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from paidtwice.lab import Lab
from paidtwice.results import SweepMatrix
from paidtwice.sweep import Answers, KillPlan, sweep
from paidtwice.targets import TargetSpec

APPS = Path(__file__).resolve().parent / "ts_apps"
SWEPT = {
    # app: the handlers a sweep with nothing but --cmd finds (SERVICE/HANDLER; the private ones are not)
    "service_app": {"Desk"},
    "object_app": {"Notes/remember", "Notes/recall", "Notes/forget"},
    "workflow_app": {"Review/run", "Reviews/start"},  # a workflow's shared handler is not swept alone
    "signals_app": {"Relay"},
}


def _sweep_app(lab: Lab, name: str) -> list[SweepMatrix]:
    what = TargetSpec(command=f"node src/{name}.ts", app_dir=APPS)
    # 2 points at a time per app, the four apps at once, on a machine the suite shares.
    return sweep(what, answers=Answers(variations=("steady",)), kills=KillPlan(parallel=2), lab=lab)


@pytest.fixture(scope="module")
def started(lab: Lab) -> Iterator[dict[str, Future[list[SweepMatrix]]]]:
    with ThreadPoolExecutor(max_workers=len(SWEPT)) as pool:
        yield {name: pool.submit(_sweep_app, lab, name) for name in SWEPT}


def _label(matrix: SweepMatrix) -> str:
    return matrix.mode.split(" (")[0]


@pytest.mark.parametrize("app", sorted(SWEPT))
def test_every_handler_is_found_and_every_kill_placed(
    started: dict[str, Future[list[SweepMatrix]]], app: str
) -> None:
    matrices = started[app].result()
    assert {_label(m) for m in matrices} == SWEPT[app], [m.mode for m in matrices]
    assert not [m.not_swept for m in matrices if m.not_swept]
    assert all(m.clean.status == "completed" for m in matrices), [m.clean.status for m in matrices]
    missed = [(m.mode, p.crash_point, p.not_placed) for m in matrices for p in m.points if not p.confirmed]
    assert not missed, missed


@pytest.mark.parametrize("app", sorted(SWEPT))
def test_nothing_is_paid_twice(started: dict[str, Future[list[SweepMatrix]]], app: str) -> None:
    matrices = started[app].result()
    # A handler that asks no model (a status getter, a forget) is swept for its steps and journal.
    assert any(m.clean.model_calls for m in matrices), [m.mode for m in matrices]
    points = [p for m in matrices for p in m.points]
    assert points and not [p.crash_point for p in points if p.pays_twice]
    assert all(p.status == "completed" for p in points), [(p.crash_point, p.status) for p in points]
