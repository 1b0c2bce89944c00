"""Assert in your own tests that no crash point makes your agent pay twice.

    from paidtwice.testing import assert_pays_once, sweep_app

    def test_travel_agent_pays_once(paidtwice_lab):
        matrices = sweep_app(
            "agent:app", service="Travel", handler="quote", input="How much is 120 EUR in USD?",
            script="tests/travel.toml", lab=paidtwice_lab,
        )
        assert_pays_once(matrices)

The `paidtwice_lab` fixture (one restate-server and one stub for the test session) is registered as a
pytest plugin when paidtwice is installed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from paidtwice.lab._runner import Lab
from paidtwice.lab._sweep import SweepMatrix, sweep
from paidtwice.stub._turns import VARIATIONS

__all__ = ["assert_pays_once", "paidtwice_lab", "sweep_app"]


def sweep_app(
    app: str,
    *,
    service: str,
    handler: str,
    input: Any,
    script: str | Path,
    variations: Sequence[str] = VARIATIONS,
    app_dir: str | Path | None = None,
    lab: Lab | None = None,
) -> list[SweepMatrix]:
    """Sweep a user's handler at every crash point, one matrix per script variation."""
    return sweep(
        app=app,
        service=service,
        handler=handler,
        input=input,
        script=script,
        scripts=variations,
        app_dir=app_dir,
        lab=lab,
    )


def assert_pays_once(matrices: Sequence[SweepMatrix], *, allow_in_flight: bool = True) -> None:
    """Fail when a crash point paid again for a model call or a step that had completed.

    A call cut off in flight is paid again by any design (its answer never arrived); `allow_in_flight=False`
    fails on those too. A sweep that checked nothing (no crash point, or a clean run that made no model call
    at the stub) fails as well: it proves nothing.
    """
    if not any(matrix.points for matrix in matrices):
        raise AssertionError("nothing was checked: the sweep has no crash point")
    blind = [m.script for m in matrices if m.clean.model_calls == 0]
    if blind:
        raise AssertionError(f"nothing was checked under {', '.join(blind)}: no model call reached the stub")
    bad = []
    for matrix in matrices:
        for point in matrix.points:
            twice = point.pays_twice or (
                not allow_in_flight and (point.extra_model_calls > 0 or point.extra_step_runs > 0)
            )
            if twice:
                bad.append(
                    f"{matrix.script}: {point.crash_point}: +{point.extra_model_calls} model calls "
                    f"({point.model_calls_in_flight} in flight), +{point.extra_step_runs} step runs"
                )
    if bad:
        raise AssertionError("paid twice at " + str(len(bad)) + " crash point(s):\n  " + "\n  ".join(bad))


@pytest.fixture(scope="session")
def paidtwice_lab() -> Iterator[Lab]:
    """A running lab (restate-server and stub) for the whole test session."""
    with Lab(echo=lambda message: None) as lab:
        yield lab
