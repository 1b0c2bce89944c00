"""Every kind of input and output restate-sdk 1.3.0's serde takes, swept with no configuration: inputs made
from each handler's schema (the host's, from its type hint, where the SDK's manifest says nothing of it),
outputs of None and "" compared as answers, a handler that calls no model swept for its steps and state,
and a handler that refuses its input listed with its name and its answer while the others are swept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paidtwice.lab import Lab
from paidtwice.stub._auto import auto_script
from paidtwice.sweep._sweep import SweepMatrix, sweep_targets
from paidtwice.targets import AppTarget

AGENT = Path(__file__).resolve().parent / "types_agent"


@pytest.fixture(scope="module")
def matrices(lab: Lab) -> dict[str, SweepMatrix]:
    targets = AppTarget.discovered("agent:app", [], None, app_dir=AGENT, seed=0)
    swept = sweep_targets(lab, targets=targets, scripts=[("steady", auto_script("steady"))])
    return {m.mode: m for m in swept}


@pytest.mark.parametrize(
    ("handler", "input_keys"),
    [
        ("Kinds/trip", {"city", "nights"}),  # a dataclass: the manifest's schema is `true`
        ("Kinds/order", {"item", "count"}),  # a typing.TypedDict
        ("Kinds/parcel", {"weight", "fragile"}),  # a msgspec Struct
        ("Kinds/maybe", None),  # str | None
        ("Kinds/either", None),  # int | str
        ("Kinds/many", None),  # dict[str, list[Trip]]
        ("Kinds/nothing", None),  # no input, returns None
        ("Kinds/blank", None),  # returns ""
        ("Kinds/raw", None),  # bytes in and out, application/octet-stream
        ("Planner/run", {"city", "nights"}),  # a Workflow's dataclass input
    ],
)
def test_each_kind_of_input_and_output_is_swept(
    matrices: dict[str, SweepMatrix], handler: str, input_keys: set[str] | None
) -> None:
    matrix = matrices[handler]
    assert not matrix.not_swept, matrix.not_swept
    assert matrix.clean.model_calls == 1 and matrix.points
    for point in matrix.points:
        assert point.confirmed and point.status == "completed" and point.answer_matches, point.crash_point
        if input_keys is not None:
            assert isinstance(point.input, dict) and set(point.input) == input_keys
    if handler == "Kinds/raw":
        assert matrices[handler].points[0].input and isinstance(matrix.clean.answer, str)
    if handler in ("Kinds/nothing", "Kinds/blank"):
        assert matrix.clean.answer == ("" if handler == "Kinds/nothing" else json.dumps(""))


def test_a_handler_that_calls_no_model_is_swept_for_its_steps_and_state(
    matrices: dict[str, SweepMatrix],
) -> None:
    matrix = matrices["Chat/history"]
    assert not matrix.not_swept and matrix.clean.model_calls == 0
    assert matrix.points and all(p.confirmed and p.status == "completed" for p in matrix.points)
    assert any("calls no model" in line for line in matrix.summary())


def test_a_handler_that_refuses_its_input_is_named_with_its_answer(matrices: dict[str, SweepMatrix]) -> None:
    said = matrices["Kinds/greet"].not_swept
    assert said.startswith("the clean run of Kinds/greet failed before its first model call (input {")
    assert "validation error for Customer" in said
    assert matrices["Kinds/greet"].points == ()
