"""Keyed services swept: a Virtual Object and a Workflow are called with a key, given or by default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paidtwice.lab import Lab
from paidtwice.lab._sweep import SweepMatrix, SweepTarget, sweep_targets
from paidtwice.lab._sweep_runs import DEFAULT_KEY
from paidtwice.stub._turns import load_script_file

AGENT = Path(__file__).resolve().parent / "keyed_agent"


@pytest.fixture(scope="module")
def matrices(lab: Lab) -> dict[str, SweepMatrix]:
    targets = [
        SweepTarget("agent:app", "Counter", "tally", "weather?", mode="Counter", cwd=str(AGENT), key="k/1"),
        SweepTarget("agent:app", "Trip", "run", "weather?", mode="Trip", cwd=str(AGENT)),
    ]
    script = load_script_file(AGENT / "script.toml", "steady")
    return {m.mode: m for m in sweep_targets(lab, targets=targets, scripts=[("steady", script)])}


@pytest.mark.parametrize(("service", "key"), [("Counter", "k/1"), ("Trip", DEFAULT_KEY)])
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
