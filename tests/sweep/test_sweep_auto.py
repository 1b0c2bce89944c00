"""Sweeps with no script: auto answers in a real sweep of an agent nobody wrote a script for, its input made
from the input schema in the app's own discovery manifest; `--write-script` writes the answers given, and a
sweep under the written file measures what the auto sweep measured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from paidtwice._exceptions import UsageError
from paidtwice.lab import Lab
from paidtwice.sweep._options import Answers
from paidtwice.sweep._sweep import SweepMatrix, sweep
from paidtwice.targets import TargetSpec
from paidtwice.targets._inputs import input_schema, made_input
from paidtwice.testing import assert_pays_once

AGENT = Path(__file__).resolve().parent / "auto_agent"
HANDLERS = ("run", "run_naive")


def manifest_of(app_dir: Path, module: str, attr: str) -> dict[str, Any]:
    """The discovery manifest the SDK computes for `module`'s service `attr`, as the server reads it."""
    program = (
        "import json, importlib; from restate.endpoint import Endpoint; "
        "from restate.discovery import compute_discovery_json; "
        f"e = Endpoint(); e.bind(getattr(importlib.import_module({module!r}), {attr!r})); "
        "print(compute_discovery_json(e, 4, 'bidi'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        capture_output=True,
        text=True,
        cwd=app_dir,
        env={**os.environ, "OPENAI_API_KEY": "unused"},
        check=True,
    )
    manifest: dict[str, Any] = json.loads(done.stdout)
    return manifest


@pytest.fixture(scope="module")
def trip_input() -> Any:
    manifest = manifest_of(AGENT, "agent", "planner")
    schema = input_schema(manifest, "Planner", "run")
    made = made_input(schema, handler="Planner/run")
    jsonschema.validate(made, schema)
    assert made == made_input(schema, handler="Planner/run")  # the same every run
    return made


@pytest.fixture(scope="module")
def auto_sweeps(lab: Lab, trip_input: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    written = tmp_path_factory.mktemp("auto") / "answers.toml"
    matrices = {}
    for handler in HANDLERS:
        (matrix,) = sweep(
            TargetSpec(app="agent:app", service="Planner", handler=handler, input=trip_input, app_dir=AGENT),
            answers=Answers(
                variations=("steady",),
                seed=11,
                write_script=written if handler == "run_naive" else None,
            ),
            lab=lab,
        )
        matrices[handler] = matrix
    return {"matrices": matrices, "written": written}


def test_auto_answers_drive_the_tool_loop(auto_sweeps: dict[str, Any]) -> None:
    for handler in HANDLERS:
        matrix: SweepMatrix = auto_sweeps["matrices"][handler]
        # A tool call (two at once: the request allows parallel calls), then the final answer.
        assert matrix.clean.model_calls == 2, handler
        assert dict(matrix.clean.step_runs).keys() >= (
            {"model", "weather", "hotels"} if handler == "run" else set()
        )
        assert "Plan " in json.loads(matrix.clean.answer)
        for point in matrix.points:
            assert point.confirmed, point.crash_point
            assert point.status == "completed", point.crash_point


def test_journaled_pays_once_and_naive_pays_twice(auto_sweeps: dict[str, Any]) -> None:
    assert_pays_once([auto_sweeps["matrices"]["run"]])
    with pytest.raises(AssertionError, match="paid twice"):
        assert_pays_once([auto_sweeps["matrices"]["run_naive"]])


def test_written_script_replays_the_auto_sweep(
    lab: Lab, auto_sweeps: dict[str, Any], trip_input: Any
) -> None:
    written: Path = auto_sweeps["written"]
    text = written.read_text()
    assert "[[turn]]" in text and 'tool = "' in text and "parallel = [" in text
    (matrix,) = sweep(
        TargetSpec(app="agent:app", service="Planner", handler="run_naive", input=trip_input, app_dir=AGENT),
        answers=Answers(script=written, variations=("steady",)),
        lab=lab,
    )
    auto: SweepMatrix = auto_sweeps["matrices"]["run_naive"]
    assert matrix.clean.answer == auto.clean.answer
    assert [p.extra_model_calls for p in matrix.points] == [p.extra_model_calls for p in auto.points]


def test_an_input_schema_nothing_satisfies_asks_for_input() -> None:
    with pytest.raises(UsageError) as raised:
        made_input({"type": "integer", "minimum": 3, "maximum": 1}, handler="Svc/h")
    message = str(raised.value)
    assert message.startswith("cannot make an input for Svc/h from its schema (cannot make a value for $:")
    assert message.endswith("give one with --input JSON")
    assert made_input(None, handler="Svc/h") is None
    with pytest.raises(UsageError, match="no handler Svc/x"):
        input_schema({"services": [{"name": "Svc", "handlers": [{"name": "h"}]}]}, "Svc", "x")
