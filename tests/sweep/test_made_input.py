"""A handler whose clean run fails on the input paidtwice made from its schema is listed as not swept, with
its name, the first line of its error and how to sweep it, and the app's other handlers are swept: the exit
code is theirs. Named by the user, the same handler still fails the sweep; and `--check` passes no app none
of whose handlers could be swept."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from support import run_paidtwice

AGENT = Path(__file__).resolve().parent / "made_input_agent"
APP = ("sweep", "--app", "agent:app", "--app-dir", str(AGENT), "--variation", "steady", "--check")


def test_a_handler_failing_on_a_made_up_input_is_listed_and_the_others_swept(tmp_path: Path) -> None:
    records = tmp_path / "sweep.json"
    with ThreadPoolExecutor(3) as pool:
        whole = pool.submit(run_paidtwice, *APP, "--restart-delay", "0.2", "--json", str(records))
        named = pool.submit(
            run_paidtwice, *APP, "--handler", "Judge/score", "--json", str(tmp_path / "n.json")
        )
        service = pool.submit(run_paidtwice, *APP, "--service", "Judge", "--json", str(tmp_path / "s.json"))
    done = whole.result()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    [listed] = [line for line in done.stderr.splitlines() if "could not sweep" in line]
    assert listed.startswith(
        "Judge/score (steady): could not sweep, because the clean run of Judge/score fails on the "
        'input paidtwice made from its schema ({"traceparent": '
    ), listed
    # The first line of its error, not the lines after it; and how to sweep it.
    assert "not a W3C traceparent" in listed and "00-TRACE_ID" not in done.stderr, listed
    assert listed.endswith("sweep it with an input it takes: --handler Judge/score --input JSON"), listed
    points = json.loads(records.read_text())
    assert points and {p["mode"] for p in points} == {"Claims/assess"}, points
    assert all(p["confirmed"] and p["status"] == "completed" for p in points), points
    # The handler named, or no handler swept at all: an error, as before.
    for alone in (named.result(), service.result()):
        assert alone.returncode == 2, alone.stdout + alone.stderr
        assert "Traceback" not in alone.stderr and "not a W3C traceparent" in alone.stderr, alone.stderr
    assert re.search(
        r"the clean run of Judge/score fails: \d+ attempts ended in an error", named.result().stderr
    )
    assert "--handler Judge/score --input JSON" in service.result().stderr
