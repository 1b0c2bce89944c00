"""Runs parked in a durable pause (`paidtwice.sweep._schedule`, `_point.Parked`): with no plan kept, a
sweep starts runs as soon as its clean run is seen in a pause, holds each at its own pause's end, and hands
them the points the clean run shows after it, so those points wait out the pause beside the clean run, not
after it. The records are those of a sweep planned after its clean run.

The deck's agent, journaled, under `steady`, with a 4 s pause (room for a loaded machine to see the clean
run in it), both ways a sweep runs code: in paidtwice's host (`host`: the points' moments are its gates,
handed to the parked process on its stdin) and as a command seen through the protocol proxy (`cmd`, as
`sweep --cmd` sees any deployment: the proxy holds them). Each is swept twice on the session's server:
`early` (no plan kept) and `after` (one shard of one: every point starts once the clean run ended).
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Iterator

import pytest
from support import point_counts

from paidtwice.agent import QUESTION
from paidtwice.engine import epoch
from paidtwice.lab import Lab
from paidtwice.results import SweepMatrix
from paidtwice.sweep._kept import PLANS_ENV
from paidtwice.sweep._options import KillPlan
from paidtwice.sweep._sweep import deck_scripts, sweep_targets
from paidtwice.targets import CommandTarget, DeckTarget, Target

_HOST = f"{sys.executable} -m paidtwice.agent.host paidtwice.agent.weather:app --port $PORT"


@dataclasses.dataclass(frozen=True)
class _Swept:
    matrix: SweepMatrix
    said: tuple[str, ...]
    pause_ended: float
    """When the server appended the clean run's `Notification: Sleep` (the end of its pause)."""


def _target(kind: str) -> Target:
    if kind == "host":
        return DeckTarget("journaled", pause="4")
    return CommandTarget(
        f"PAIDTWICE_AGENT_MODE=journaled PAIDTWICE_PAUSE_S=4 {_HOST}",
        "Agent",
        "run",
        QUESTION,
        mode="journaled-cmd",
        stuck_after=None,
    )


@pytest.fixture(scope="module", params=["host", "cmd"])
def swept(
    request: pytest.FixtureRequest, lab: Lab, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, _Swept]]:
    said: list[str] = []
    lock = threading.Lock()

    def echo(line: str) -> None:
        with lock:
            said.append(line)

    target = _target(request.param)
    done: dict[str, _Swept] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(PLANS_ENV, str(tmp_path_factory.mktemp("plans")))
        patch.setattr(lab, "echo", echo)
        for name in ("early", "after"):
            said.clear()
            # No plan is kept between the two: the second is planned after its clean run by its shard.
            kills = KillPlan(parallel=16, shard=(1, 1) if name == "after" else None)
            (matrix,) = sweep_targets(lab, targets=[target], scripts=deck_scripts(["steady"]), kills=kills)
            journal = lab.sql.journal(matrix.clean.invocation_id)
            ended = [epoch(e.appended_at) for e in journal if e.label() == "Notification: Sleep"]
            assert len(ended) == 1 and ended[0] is not None, [e.label() for e in journal]
            done[name] = _Swept(matrix, tuple(said), ended[0])
        yield done


def test_the_points_after_the_pause_are_run_by_runs_parked_in_it(swept: dict[str, _Swept]) -> None:
    early = swept["early"]
    points = early.matrix.points
    pause = next(n for n, p in enumerate(points) if p.kind == "pause")
    after = points[pause + 1 :]
    assert after, [p.crash_point for p in points]
    # Each started before the clean run's pause had ended: it waited out its own pause beside it.
    assert all((p.started_at or 0.0) < early.pause_ended for p in after), [
        (p.crash_point, p.started_at, early.pause_ended) for p in after
    ]
    # And every one was placed at its moment, the kill aimed from its new holds: a record whose run started
    # then is the parked run's (one that went past its pause is replaced by a run started only now).
    assert all(p.confirmed for p in points), [(p.crash_point, p.missed) for p in points]
    assert early.said == ()


def test_a_parked_run_gives_the_records_of_a_point_planned_after_the_clean_run(
    swept: dict[str, _Swept],
) -> None:
    early, after = swept["early"].matrix, swept["after"].matrix
    assert [point_counts(p) for p in early.points] == [point_counts(p) for p in after.points]
    # Planned after its clean run, no point after the pause starts before the clean run's pause ended.
    pause = next(n for n, p in enumerate(after.points) if p.kind == "pause")
    assert all((p.started_at or 0.0) > swept["after"].pause_ended for p in after.points[pause + 1 :])
