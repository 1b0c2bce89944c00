"""The pytest helpers (`paidtwice.testing`) take a target, the one the sweep and the soak take, beside the
app-name form."""

from __future__ import annotations

from pathlib import Path

import pytest

from paidtwice._exceptions import UsageError
from paidtwice.lab import Lab
from paidtwice.targets import AppTarget, DeckTarget
from paidtwice.testing import assert_pays_once, sweep_app

AUTO_AGENT = Path(__file__).parent / "auto_agent"


def test_assert_pays_once_sweeps_a_target_and_fails_the_one_that_pays_twice(lab: Lab) -> None:
    matrices = assert_pays_once(DeckTarget("journaled"), variations=["steady"], lab=lab)
    assert [(m.mode, m.script) for m in matrices] == [("journaled", "steady")]
    assert matrices[0].points and matrices[0].clean.model_calls > 0
    with pytest.raises(AssertionError, match="^paid twice at "):
        assert_pays_once(DeckTarget("naive"), variations=["steady"], lab=lab)


def test_sweep_app_takes_an_app_target_as_it_takes_the_app_s_name(lab: Lab) -> None:
    (target,) = AppTarget.discovered("agent:app", ["Planner/run"], None, app_dir=AUTO_AGENT, seed=0)
    by_target = sweep_app(target, variations=["steady"], lab=lab)
    by_name = sweep_app(
        "agent:app", service="Planner", handler="run", variations=["steady"], app_dir=AUTO_AGENT, lab=lab
    )
    assert [m.mode for m in by_target] == [m.mode for m in by_name] == ["Planner/run"]
    assert len(by_target[0].points) == len(by_name[0].points) > 0
    assert_pays_once(by_target)


def test_a_target_names_its_own_handler() -> None:
    with pytest.raises(UsageError, match="^a target names its own service, handler, input and directory"):
        sweep_app(DeckTarget("journaled"), service="Agent")
