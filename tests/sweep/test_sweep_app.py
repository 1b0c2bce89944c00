"""`paidtwice sweep --app` on an agent that is not the deck's: the official openai client, its own tool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from support import DEADLINE

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "travel_agent"


def sweep_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paidtwice", "sweep", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        timeout=DEADLINE,
    )


APP = ["--app", "agent:app", "--service", "Travel", "--handler", "quote", "--app-dir", str(EXAMPLE)]
INPUT = ["--input", json.dumps("How much is 120 EUR in USD?")]

_Run = Future[subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def records(swept: _Run, out: Path) -> list[dict[str, object]]:
    done = swept.result()
    # --check: the example makes its model call outside the journal, so it pays twice.
    assert done.returncode == 1, done.stderr
    assert "paid twice for completed work" in done.stderr
    assert "\nTravel/quote, script steady: clean run " in "\n" + done.stdout
    loaded: list[dict[str, object]] = json.loads(out.read_text())
    return loaded


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sweep") / "travel.json"


@pytest.fixture(scope="module")
def started(
    out: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[_Run, list[tuple[list[str], str, _Run]]]]:
    """This file's commands, all started with the module: the example's sweep, and each bad input (each ends
    before anything starts) with the line it must end with."""
    broken = tmp_path_factory.mktemp("broken") / "broken.toml"
    broken.write_text("[[turn]\ntext = 1\n")
    cases: list[tuple[list[str], str]] = [
        (
            [
                "--app",
                "no_such_module:app",
                "--service",
                "Travel",
                "--handler",
                "quote",
                "--script",
                "x.toml",
            ],
            "cannot import no_such_module",
        ),
        (
            [
                *APP[:2],
                "--service",
                "Nope",
                "--handler",
                "quote",
                "--app-dir",
                str(EXAMPLE),
                "--script",
                str(EXAMPLE / "script.toml"),
            ],
            "no Restate service 'Nope'",
        ),
        (
            [
                *APP[:4],
                "--handler",
                "nope",
                "--app-dir",
                str(EXAMPLE),
                "--script",
                str(EXAMPLE / "script.toml"),
            ],
            "has no handler 'nope'",
        ),
        ([*APP, "--script", str(broken)], "does not parse"),
        ([*APP, "--script", str(EXAMPLE / "script.toml"), "--input", "{nope"], "--input is not JSON"),
        (["--script", "nonsense"], "unknown script"),
    ]
    with ThreadPoolExecutor(max_workers=1 + len(cases)) as pool:
        sweep = pool.submit(
            sweep_cli, *APP, *INPUT, "--script", str(EXAMPLE / "script.toml"), "--json", str(out), "--check"
        )
        yield sweep, [(args, message, pool.submit(sweep_cli, *args)) for args, message in cases]


@pytest.fixture(scope="module", autouse=True)
def swept(started: tuple[_Run, list[tuple[list[str], str, _Run]]]) -> _Run:
    return started[0]


@pytest.fixture(scope="module")
def bad_input(started: tuple[_Run, list[tuple[list[str], str, _Run]]]) -> list[tuple[list[str], str, _Run]]:
    return started[1]


def points(records: list[dict[str, object]], script: str) -> list[dict[str, object]]:
    return sorted((r for r in records if r["script"] == script), key=lambda r: int(str(r["order"])))


def test_records_have_the_documented_fields(records: list[dict[str, object]]) -> None:
    fields = {"crash_point", "mode", "script", "status", "extra_model_calls", "extra_step_runs", "mismatches"}
    assert records and all(fields | {"answer_matches"} <= set(r) for r in records)
    assert {r["script"] for r in records} == {"steady", "drifting", "changed"}
    assert all(r["confirmed"] for r in records)


def test_steady_matrix_counts_model_calls_at_the_http_layer(records: list[dict[str, object]]) -> None:
    steady = points(records, "steady")
    names = [str(p["crash_point"]) for p in steady]
    assert "in flight: model call 1" in names and "in flight: step convert" in names
    calls_returned = 0
    for point in steady:
        if point["kind"] == "model-returned":
            calls_returned += 1
        in_flight = 1 if point["kind"] == "in-flight-model" else 0
        # Every answer that had come back is paid for again, plus the one cut off in flight.
        assert point["extra_model_calls"] == calls_returned + in_flight, point["crash_point"]
        in_step = point["kind"] == "in-flight-step"
        assert point["extra_step_runs"] == (1 if in_step else 0), point["crash_point"]
        assert point["status"] == "completed" and point["answer_matches"], point["crash_point"]


def test_changed_matrix_mismatches_once_the_step_is_journaled(records: list[dict[str, object]]) -> None:
    changed = points(records, "changed")
    # The example has no retry policy of its own: the sweep settles it after 3 mismatches in a row.
    paused = [p for p in changed if p["status"] == "stuck"]
    different = [p for p in changed if p["status"] == "completed" and not p["answer_matches"]]
    assert paused and all(int(str(p["mismatches"])) >= 3 for p in paused)
    assert different
    first_paused = min(int(str(p["order"])) for p in paused)
    assert all(int(str(p["order"])) < first_paused for p in different)


def test_bad_input_is_one_line_and_exit_2(bad_input: list[tuple[list[str], str, _Run]]) -> None:
    for args, message, run in bad_input:
        done = run.result()
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (args, done.stderr)
        assert "Traceback" not in done.stderr
