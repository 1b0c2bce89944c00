"""Server-free: a point whose replay could not finish gives no verdict on the runs it made (they may be
retries of a step that never completed, on a path the changed answers took); an answer asked for again
before it got stuck is still paid twice."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from paidtwice.results import PointResult, load_results

CAPTURED = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "sweep.json"


def a_point() -> PointResult:
    return load_results([CAPTURED]).points[0]


def test_a_replay_that_could_not_finish_is_judged_only_by_the_answers_it_asked_again() -> None:
    point = a_point()
    retried = dataclasses.replace(
        point, status="backing-off", extra_step_runs=4, steps_in_flight=1, answers_asked_again=0,
        extra_model_calls=0, model_calls_in_flight=0, not_placed="its run could not finish: ...",
    )  # fmt: skip
    assert not retried.pays_twice
    assert dataclasses.replace(retried, status="completed").pays_twice
    assert dataclasses.replace(retried, answers_asked_again=1).pays_twice
    assert json.loads(json.dumps(dataclasses.asdict(retried)))["status"] == "backing-off"
