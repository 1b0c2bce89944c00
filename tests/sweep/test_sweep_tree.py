"""Handlers that call other handlers of their app, swept whole with nothing named (no script, no input, no
service or handler): a multi-agent handoff (by name, `generic_call`), an orchestrator with workers (calls
gathered at once) and a sub-workflow (`workflow_call`), in tests/sweep/tree_agents.

One sweep of the three journaled apps (every handler of each, on the session's server) shows: the callees'
model calls and steps are on the caller's timeline and in its counts, kills land inside the callees, the
gathered workers are one moment, and nothing pays twice (the condition of `--check`'s exit 0). One
`paidtwice sweep --check` of the naive handoff (its specialists call the model outside the journal) exits 1,
and the answer paid again is attributed to the specialist's handler inside the triage agent's tree.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from paidtwice.lab import Lab
from paidtwice.results import SweepMatrix
from paidtwice.stub import AutoBook
from paidtwice.sweep import Answers, sweep_targets
from paidtwice.targets import TargetSpec
from tests.support import run_paidtwice

AGENTS = Path(__file__).resolve().parent / "tree_agents"
ROOTS = {
    # the handler that calls, the handlers it may call, the steps of its tree in a clean run
    "Triage/run": ({"BillingAgent/answer_billing", "SupportAgent/answer_support"}, {"route": 1, "answer": 1}),
    "Orchestrator/run": ({"Worker/write"}, {"plan": 1, "write": 2}),
    "Publisher/publish": ({"Article/draft"}, {"draft": 1, "review": 1}),
}
SPECIALISTS = {"BillingAgent/answer_billing", "SupportAgent/answer_support"}


_Naive = tuple[int, str, list[dict[str, Any]]]


@pytest.fixture(scope="module", autouse=True)
def naive_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Future[_Naive]]:
    """`paidtwice sweep --check` of the naive handoff, started first: it runs on a server of its own while
    the journaled trees are swept on the session's."""

    def run() -> _Naive:
        record = tmp_path_factory.mktemp("tree") / "naive.json"
        app = ("--app", "handoff_naive", "--app-dir", str(AGENTS))
        done = run_paidtwice("sweep", *app, "--variation", "steady", "--check", "--json", str(record))
        return done.returncode, done.stdout + done.stderr, json.loads(record.read_text())

    with ThreadPoolExecutor(max_workers=1) as pool:
        yield pool.submit(run)


@pytest.fixture(scope="module")
def swept(lab: Lab) -> dict[str, SweepMatrix]:
    answers = Answers(variations=("steady",))
    targets = [
        target
        for app in ("handoff", "orchestrator", "subworkflow")
        for target in TargetSpec(app=app, app_dir=AGENTS).build(seed=answers.seed)
    ]
    scripts = answers.scripts(user_code=True, book=AutoBook(), recording=None)
    return {m.mode: m for m in sweep_targets(lab, targets=targets, scripts=scripts)}


@pytest.fixture(scope="module")
def naive(naive_run: Future[_Naive]) -> _Naive:
    return naive_run.result()


def test_every_handler_is_swept_the_callers_with_their_callees(swept: dict[str, SweepMatrix]) -> None:
    callees = set().union(*(callees for callees, _ in ROOTS.values()))
    assert set(swept) == set(ROOTS) | callees
    for root, (called, steps) in ROOTS.items():
        clean = swept[root].clean
        assert clean.status == "completed", root
        # Every model call of the tree is counted, each by the handler that made it.
        assert len(clean.model_callers) == clean.model_calls, root
        in_callees = set(clean.model_callers) - {root}
        assert in_callees and in_callees <= called, root
        assert dict(clean.step_runs) == steps, root
        assert clean.unfollowed == ()


def test_kills_land_inside_the_callees(swept: dict[str, SweepMatrix]) -> None:
    for root, (called, _) in ROOTS.items():
        inside = [p for p in swept[root].points if any(c in p.crash_point for c in called)]
        assert any(p.confirmed and p.kind.startswith("in-flight") for p in inside), (root, inside)
        assert any(p.confirmed and p.kind == "after-entry" for p in inside), root
        for point in inside:
            assert point.status == "completed" and point.answer_matches, point.crash_point


def test_workers_called_at_once_are_one_moment(swept: dict[str, SweepMatrix]) -> None:
    together = [p for p in swept["Orchestrator/run"].points if p.kind == "in-flight-parallel"]
    assert [p.crash_point for p in together] == ["in flight: model calls 2 and 3 together in Worker/write"]
    assert together[0].confirmed, together[0].not_placed
    assert together[0].model_calls_in_flight == 2


def test_the_journaled_trees_pay_once(swept: dict[str, SweepMatrix]) -> None:
    points = [p for m in swept.values() for p in m.points]
    assert points and not [p.crash_point for p in points if p.pays_twice]
    for root in ROOTS:
        # Each handler of the tree is named with what it paid again: nothing, outside flight.
        assert all(n == 0 for p in swept[root].points for _, n in p.paid_again_by), root


def test_the_naive_callee_is_found_and_named(naive: _Naive) -> None:
    code, output, records = naive
    assert code == 1, output
    triage = [r for r in records if r["mode"] == "Triage/run"]
    paid = [r for r in triage if r["answers_asked_again"]]
    assert paid, output
    for record in paid:
        # Paid again inside the triage agent's tree, by the specialist it handed over to, not by itself.
        assert "(not journaled) in " in record["crash_point"]
        [[handler, count]] = record["paid_again_by"]
        assert handler in SPECIALISTS and count == record["answers_asked_again"] == 1
        assert handler in record["crash_point"]
    # The summary's line for the triage agent says who in its tree asked again.
    [line] = [line for line in output.splitlines() if line.startswith("Triage/run: ")]
    assert "pay twice" in line and "(asked again by " in line
    assert any(handler in line for handler in SPECIALISTS)
