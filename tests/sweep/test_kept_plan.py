"""The plan a sweep keeps from its last clean run of the same code (`paidtwice.sweep._kept`), and the sweep
that starts its points from it beside the next clean run (`paidtwice.sweep._schedule`).

The first tests are pure logic: what changes a plan's key (a changed agent does, its records and docs do
not) and what makes two plans the same. The others sweep the deck's journaled agent three times on the
session's server: planned after its clean run (no kept plan), from the plan that sweep kept, and from a
kept plan that no longer matches; the three give the same records and counts.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from support import point_counts

from paidtwice.engine import JournalEntry, epoch
from paidtwice.lab import Lab
from paidtwice.results import CrashPoint, SweepMatrix
from paidtwice.stub import script_by_name
from paidtwice.sweep._kept import (
    PLANS_ENV,
    keep_plan,
    kept_durations,
    kept_plan,
    plan_key,
    plans_dir,
    same_plan,
)
from paidtwice.sweep._options import KillPlan, ModelStub
from paidtwice.sweep._sweep import deck_scripts, sweep_targets
from paidtwice.targets import CommandTarget, DeckTarget

_LAB = cast(Lab, SimpleNamespace(cluster=1, server_version="1.7.12"))
"""What a plan's key reads of a lab: its size and server version."""


def _agent(folder: Path) -> CommandTarget:
    (folder / "agent.py").write_text("print('v1')\n")
    return CommandTarget("python agent.py", "Agent", "run", "hi", mode="cmd", cwd=str(folder))


def test_a_changed_agent_has_another_key_its_records_and_docs_do_not(tmp_path: Path) -> None:
    target = _agent(tmp_path)
    script = script_by_name("steady")
    key = plan_key(_LAB, target, script, ModelStub())
    assert key is not None and key == plan_key(_LAB, target, script, ModelStub())
    (tmp_path / "paidtwice-results").mkdir()
    (tmp_path / "paidtwice-results" / "sweep.json").write_text("{}")
    (tmp_path / "NOTES.md").write_text("notes")
    assert plan_key(_LAB, target, script, ModelStub()) == key
    (tmp_path / "agent.py").write_text("print('v2, one step more')\n")
    changed = plan_key(_LAB, target, script, ModelStub())
    assert changed is not None and changed != key
    (tmp_path / "helper.py").write_text("x = 1\n")
    assert plan_key(_LAB, target, script, ModelStub()) not in (key, changed)
    # The script, the target's input and the model's latency are part of the key too.
    assert plan_key(_LAB, target, script_by_name("drifting"), ModelStub()) != plan_key(
        _LAB, target, script, ModelStub()
    )
    other = dataclasses.replace(target, input="bye")
    assert plan_key(_LAB, other, script, ModelStub()) != plan_key(_LAB, target, script, ModelStub())
    assert plan_key(_LAB, target, script, ModelStub(latency=1.0)) != plan_key(
        _LAB, target, script, ModelStub()
    )


def _point(order: int, **fields: Any) -> CrashPoint:
    return CrashPoint(name=f"after entry {order}", order=order, kind="after-entry", journal_entries=order,
                      **fields)  # fmt: skip


def test_plans_are_the_same_when_only_their_times_differ() -> None:
    holds = ("model:1", "1/model:1")
    kept = [_point(1, begins=10.0, covers=0.25), _point(2, gate="op3", model_holds=holds)]
    assert same_plan(kept, [_point(1, begins=99.0, covers=0.5), _point(2, gate="op3", model_holds=holds)])
    assert not same_plan(kept, [_point(1), _point(2, gate="op4", model_holds=holds)])
    assert not same_plan(kept, [_point(1), _point(2, gate="op3", model_holds=("model:1",))])
    assert not same_plan(kept, kept[:1])
    assert not same_plan(kept, [*kept, _point(3)])


def test_a_kept_plan_reads_back_and_a_broken_file_is_no_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(PLANS_ENV, str(tmp_path / "plans"))
    holds = ("model:2", "3/model:1")
    points = [_point(1, covers=0.5), _point(2, model_holds=holds, pause_op=4, hold_entries=5)]
    assert kept_plan("k1") is None
    keep_plan("k1", points, alone=True)
    assert kept_plan("k1") == points and kept_durations("k1") == {}
    keep_plan("k1", points, {2: 12.5}, alone=True)
    assert kept_plan("k1") == points and kept_durations("k1") == {2: 12.5}
    # A clean run whose agent served other services of the app (its handler's callees): not used.
    keep_plan("k4", points, alone=False)
    assert kept_plan("k4") is None
    assert kept_plan(None) is None
    (plans_dir() / "k2.json").write_text("{not json")
    assert kept_plan("k2") is None
    (plans_dir() / "k3.json").write_text(json.dumps({"format": 2, "key": "k1", "points": []}))
    assert kept_plan("k3") is None  # another key's file
    # A plan the code before named holds wrote (format 1: the tree's call numbers) is stale: never read.
    old = {"name": "in flight: model call 3", "order": 1, "kind": "in-flight-model", "journal_entries": 5}
    stale = {"format": 1, "key": "k5", "alone": True, "points": [{**old, "model_holds": [3]}]}
    (plans_dir() / "k5.json").write_text(json.dumps(stale))
    assert kept_plan("k5") is None
    assert sorted(p.name for p in plans_dir().iterdir()) == [f"k{n}.json" for n in range(1, 6)]


# -- three sweeps of one small agent on the session's server --------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Swept:
    matrix: SweepMatrix
    said: tuple[str, ...]
    output_at: float
    """When the server appended the clean run's output."""
    plan: tuple[CrashPoint, ...]
    """The plan kept once the sweep was done: its clean run's."""


@pytest.fixture(scope="module")
def swept(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, _Swept]]:
    """The deck's journaled agent under `steady`, swept: `early` with no kept plan (its points start as
    its clean run shows them), `after` as one shard of one (its points start once the clean run ended),
    `kept` from the plan the two kept, `stale` from a kept plan that lost its last point and moved a gate."""
    said: list[str] = []
    lock = threading.Lock()

    def echo(line: str) -> None:
        with lock:
            said.append(line)

    target = DeckTarget("journaled")
    scripts = deck_scripts(["steady"])
    done: dict[str, _Swept] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(PLANS_ENV, str(tmp_path_factory.mktemp("plans")))
        patch.setattr(lab, "echo", echo)
        key = plan_key(lab, target, scripts[0][1], ModelStub(price_model=lab.price_model))
        assert key is not None and kept_plan(key) is None
        for name in ("early", "after", "kept", "stale"):
            if name == "stale":
                plan = kept_plan(key)
                assert plan is not None
                stale = [*plan[:-2], dataclasses.replace(plan[-2], gate="moved")]
                keep_plan(key, stale, alone=True)
            said.clear()
            kills = KillPlan(parallel=16, shard=(1, 1) if name == "after" else None)
            (matrix,) = sweep_targets(lab, targets=[target], scripts=scripts, kills=kills)
            output = [e for e in lab.sql.journal(matrix.clean.invocation_id) if e.type == "Command: Output"]
            plan = kept_plan(key)
            assert plan is not None
            # Once its points are measured, the plan keeps how long each took: the longest start first.
            assert sorted(kept_durations(key)) == [p.order for p in matrix.points]
            done[name] = _Swept(matrix, tuple(said), _appended(output[0]), tuple(plan))
        yield done


def _appended(entry: JournalEntry) -> float:
    at = epoch(entry.appended_at)
    assert at is not None
    return at


def test_a_kept_plan_starts_the_points_beside_the_clean_run(swept: dict[str, _Swept]) -> None:
    after, kept = swept["after"], swept["kept"]
    assert min(p.started_at or 0.0 for p in after.matrix.points) > after.output_at
    # Points of the kept plan started before the clean run had ended, and every one was kept.
    assert min(p.started_at or 0.0 for p in kept.matrix.points) < kept.output_at
    assert len(kept.matrix.points) == len(after.matrix.points)
    assert kept.said == ()


def test_with_no_plan_kept_the_points_start_as_the_clean_run_shows_them(swept: dict[str, _Swept]) -> None:
    early, after = swept["early"], swept["after"]
    started = sorted(p.started_at or 0.0 for p in early.matrix.points)
    # The first points started while the clean run still ran.
    assert started[0] < early.output_at
    assert len(early.matrix.points) == len(after.matrix.points)
    assert early.said == ()


def test_a_kept_plan_gives_the_records_and_counts_of_a_plan_made_after_the_clean_run(
    swept: dict[str, _Swept],
) -> None:
    after = swept["after"].matrix
    for name in ("early", "kept", "stale"):
        matrix = swept[name].matrix
        assert [point_counts(p) for p in matrix.points] == [point_counts(p) for p in after.points], name
        clean, before = (dataclasses.replace(m.clean, invocation_id="") for m in (matrix, after))
        assert clean == before, name
        # Each point's share of the run is its own clean run's (measured then), not the kept plan's.
        assert [p.covers for p in matrix.points] == [p.covers for p in swept[name].plan], name


def test_a_plan_that_no_longer_matches_is_thrown_away_and_said_in_one_line(
    swept: dict[str, _Swept],
) -> None:
    stale = swept["stale"]
    points = len(swept["after"].matrix.points)
    assert stale.said == (
        f"paidtwice: the plan kept for journaled/steady ({points - 1} points) is not its clean run's "
        f"({points} points): the points started from it are thrown away, re-planned",
    )
    # The re-planned points start only once the clean run has planned them.
    assert min(p.started_at or 0.0 for p in stale.matrix.points) > stale.output_at
