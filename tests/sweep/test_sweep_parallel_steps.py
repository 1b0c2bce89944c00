"""Steps started together, swept on the session's server in one sweep: Restate's claim agent (three quick
checks gathered with `restate.gather`) in plain Restate and in each framework's integration, and the
parallel model calls of examples/parallel_agent under `--cmd`. Journaled, every point lands (or says why
not) and nothing pays twice; the naive twins (the same agents, model calls outside the journal) still do."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from paidtwice.lab import Lab
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._options import KillPlan
from paidtwice.sweep._sweep import SweepMatrix, sweep_targets
from paidtwice.targets import AppTarget, CommandTarget
from paidtwice.testing import assert_pays_once

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CLAIM = EXAMPLES / "claim_agent"
IMPACT = EXAMPLES / "parallel_agent"
INPUT = "Dental cleaning, 120 EUR, 2026-11-02"
CHANGE = "We move the support desk to a 24/7 rota."
HOST = f"{sys.executable} -m paidtwice.agent.host agent:app --port $PORT"

# mode: (target, journals its model calls)
TARGETS = {
    "plain/run": (AppTarget("agent:app", "Claim", "run", INPUT, mode="plain/run", cwd=str(CLAIM)), True),
    "plain/run_naive": (
        AppTarget("agent:app", "Claim", "run_naive", INPUT, mode="plain/run_naive", cwd=str(CLAIM)),
        False,
    ),
    **{
        f"Claim{framework}{form}": (
            AppTarget(
                app, f"Claim{framework}{form}", "run", INPUT, mode=f"Claim{framework}{form}", cwd=str(CLAIM)
            ),
            form == "Durable",
        )
        for framework, app in (
            ("Agents", "agents_app:app"),
            ("Pydantic", "pydantic_app:app"),
            ("Langchain", "langchain_app:app"),
        )
        for form in ("Durable", "Plain")
    },
    **{
        f"cmd/{handler}": (
            CommandTarget(
                HOST,
                "Impact",
                handler,
                CHANGE,
                mode=f"cmd/{handler}",
                cwd=str(IMPACT),
                stuck_after=None,
            ),
            handler == "run",
        )
        for handler in ("run", "run_naive")
    },
}
SCRIPTS = {"plain": CLAIM / "plain.toml", "Claim": CLAIM / "script.toml", "cmd": IMPACT / "script.toml"}
"""The script file each target's model answers come from, by the start of its mode."""


@pytest.fixture(scope="module")
def matrices(lab: Lab) -> dict[str, SweepMatrix]:
    """Every target once under `steady`: one sweep per script file, the three at once (one after another,
    each waited for its slowest clean run and its last point alone)."""

    def swept(prefix: str, path: Path) -> list[SweepMatrix]:
        targets = [target for mode, (target, _) in TARGETS.items() if mode.startswith(prefix)]
        script = load_script_file(path, "steady")
        return sweep_targets(lab, kills=KillPlan(parallel=8), targets=targets, scripts=[("steady", script)])

    with ThreadPoolExecutor(max_workers=len(SCRIPTS)) as pool:
        done = [pool.submit(swept, prefix, path) for prefix, path in SCRIPTS.items()]
        return {m.mode: m for future in done for m in future.result()}


def test_every_target_was_swept(matrices: dict[str, SweepMatrix]) -> None:
    assert set(matrices) == set(TARGETS)
    for mode, matrix in matrices.items():
        assert matrix.clean.status == "completed", mode
        assert matrix.points, mode


@pytest.mark.parametrize("mode", [m for m in TARGETS if not m.startswith("cmd")])
def test_the_checks_are_one_moment(matrices: dict[str, SweepMatrix], mode: str) -> None:
    """The three checks make one point with every step held, never a point inside one check alone."""
    matrix = matrices[mode]
    assert dict(matrix.clean.step_runs)["fraud"] == 1, mode
    names = [p.crash_point for p in matrix.points]
    together = [n for n in names if n.startswith("in flight: steps ") and n.endswith(" together")]
    assert len(together) == 1, names
    for check in ("eligibility", "cost", "fraud"):
        assert f"in flight: step {check}" not in names, names
        assert check in together[0]


def test_the_parallel_calls_are_one_moment_under_cmd(matrices: dict[str, SweepMatrix]) -> None:
    """Journaled, the two analyses' steps sent their RunCommands together: one moment, both calls held,
    though the stub may answer the first before the second arrives. (Naive, two plain calls leave nothing
    on the wire to say they were started together; they are grouped only when they overlap at the stub.)"""
    names = [p.crash_point for p in matrices["cmd/run"].points]
    assert "in flight: model calls 2 and 3 together" in names, names
    assert "in flight: model call 2" not in names and "in flight: model call 3" not in names, names


@pytest.mark.parametrize("mode", [m for m, (_, journaled) in TARGETS.items() if journaled])
def test_journaled_lands_or_says_why_and_pays_only_in_flight(
    matrices: dict[str, SweepMatrix], mode: str
) -> None:
    matrix = matrices[mode]
    for point in matrix.points:
        # Placed, or said why not (what the journal held instead): never a silent miss.
        assert point.confirmed == (not point.not_placed), point.crash_point
        assert point.status == "completed" and point.answer_matches, point.crash_point
        assert not point.pays_twice, point.crash_point
    if not mode.startswith("cmd"):
        # In-process every moment is held, the quick checks too.
        assert all(p.confirmed for p in matrix.points), [(p.crash_point, p.not_placed) for p in matrix.points]
    else:
        # The proxy holds one completion, not a sibling step still running: that point can be missed.
        # Both calls held is a moment the proxy and the stub hold whatever order the clean run's frames
        # and calls came in: planned with the journal a run holding both reaches (the batch's RunCommands,
        # never a held step's result; tests/sweep/test_derive_points.py), it is placed.
        (calls,) = [p for p in matrix.points if p.crash_point == "in flight: model calls 2 and 3 together"]
        assert calls.confirmed and calls.model_calls_in_flight == 2, calls.not_placed
    assert_pays_once([matrix])


@pytest.mark.parametrize("mode", [m for m, (_, journaled) in TARGETS.items() if not journaled])
def test_naive_twins_still_pay_twice(matrices: dict[str, SweepMatrix], mode: str) -> None:
    with pytest.raises(AssertionError, match="paid twice"):
        assert_pays_once([matrices[mode]])
