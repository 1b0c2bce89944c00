"""One smoke per command, each as a user types it, against a real restate-server where the command needs one.

These are the quick tier's view of the commands (`bash scripts/test.sh --quick`; `tests/tiers.py` names them):
each proves its command starts, does its main job once and exits as documented. The tests beside each
command's code measure what the command says; these only show it runs end to end.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support import DEADLINE, assert_eventually, run_paidtwice

from paidtwice.deck import EXPERIMENTS, Deck
from paidtwice.lab import Lab
from paidtwice.results import RunRecord

TESTS = Path(__file__).parents[1]
FIXTURES = TESTS / "fixtures"


def paidtwice(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = run_paidtwice(*args, cwd=cwd, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def records(path: Path) -> list[dict[str, object]]:
    read = json.loads(path.read_text())
    return read if isinstance(read, list) else [read]


@pytest.fixture(scope="module")
def clean_run(lab: Lab) -> RunRecord:
    """The deck's clean row, run once on the session's server: the invocation the reading commands read."""
    [row] = [row for row in EXPERIMENTS if row.name == "clean"]
    return Deck(lab).run(row)


def test_experiments_lists_the_deck(tmp_path: Path) -> None:
    done = paidtwice("experiments", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert all(row.name in done.stdout for row in EXPERIMENTS)


def test_provision_says_where_the_server_is(tmp_path: Path) -> None:
    done = paidtwice("provision", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip().splitlines()[-1]).name == "restate-server"


def test_lint_finds_a_model_call_outside_the_journal(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import restate\nfrom openai import OpenAI\n\nagent = restate.Service('Agent')\n\n\n"
        "@agent.handler()\nasync def run(ctx: restate.Context, question: str) -> str:\n"
        "    answer = OpenAI().chat.completions.create(model='m', messages=[])\n"
        "    return str(answer)\n"
    )
    done = paidtwice("lint", str(agent), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "agent.py:9" in done.stdout


def test_run_measures_one_row(tmp_path: Path) -> None:
    # `--json -`: the records are stdout, alone (the run's table goes to stderr), and no file is left.
    done = paidtwice("run", "clean", "--json", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [record] = json.loads(done.stdout)
    assert record["name"] == "clean" and record["model_calls"] == 2
    assert "Full record:" in done.stderr and list(tmp_path.iterdir()) == []


def test_deck_matches_one_row(tmp_path: Path) -> None:
    done = paidtwice("deck", "--only", "clean", "--json", "deck.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [r["name"] for r in records(tmp_path / "deck.json")] == ["clean"]


def test_sweep_of_the_journaled_agent_passes_its_check(tmp_path: Path) -> None:
    done = paidtwice(
        "sweep", "--mode", "journaled", "--script", "steady", "--check", "--json", "sweep.json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    points = records(tmp_path / "sweep.json")
    assert len(points) >= 3 and not any(p["pays_twice"] for p in points)


def test_soak_loses_nothing(tmp_path: Path) -> None:
    done = paidtwice("soak", "--invocations", "20", "--kills", "1", "--json", "soak.json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    [record] = records(tmp_path / "soak.json")
    assert record["sent"] == 20 and record["lost"] == 0


def test_journal_prints_the_invocation_by_index(clean_run: RunRecord, lab: Lab, tmp_path: Path) -> None:
    done = paidtwice("journal", clean_run.invocation_id, "--admin-url", lab.server.admin_url, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Command: Run" in done.stdout and "weather" in done.stdout


def test_capture_writes_the_journal_file(clean_run: RunRecord, lab: Lab, tmp_path: Path) -> None:
    done = paidtwice(
        "capture", "journals", "--service", clean_run.service, "--admin-url", lab.server.admin_url,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [journal] = (tmp_path / "journals").iterdir()
    assert json.loads(journal.read_text())["invocation_id"] == clean_run.invocation_id


@pytest.mark.parametrize("command", ["explain", "recover"])
def test_a_completed_invocation_has_nothing_to_explain_or_recover(
    command: str, clean_run: RunRecord, lab: Lab, tmp_path: Path
) -> None:
    done = paidtwice(command, clean_run.invocation_id, "--admin-url", lab.server.admin_url, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "completed" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_replay_check_replays_a_captured_journal(tmp_path: Path) -> None:
    journal = FIXTURES / "journals" / "clean.json"
    service = json.loads(journal.read_text())["service"]
    done = paidtwice(
        "replay-check", "--app", "paidtwice.agent.weather:app", "--script", "steady", str(journal),
        cwd=tmp_path,
        env={"PAIDTWICE_AGENT_MODE": "naive", "PAIDTWICE_SERVICE": service},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "replays" in done.stdout


def test_report_makes_one_page(tmp_path: Path) -> None:
    done = paidtwice("report", str(FIXTURES / "results" / "deck.json"), "-o", "deck.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "<html" in (tmp_path / "deck.html").read_text()[:200].lower()


def test_lab_up_serves_until_sigterm_and_watch_finds_nothing_stuck_on_it(tmp_path: Path) -> None:
    info = tmp_path / "lab.json"
    up = subprocess.Popen(
        [sys.executable, "-m", "paidtwice", "lab", "up", "--info", str(info)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert_eventually(lambda: info.exists() or up.poll() is not None, timeout=240, what="lab up")
        assert up.poll() is None, up.communicate()[1]
        urls = json.loads(info.read_text())
        watched = paidtwice("watch", "--once", "--json", "-", "--admin-url", urls["admin_url"], cwd=tmp_path)
        assert watched.returncode == 0, watched.stdout + watched.stderr
        assert json.loads(watched.stdout)["record"] == "watch"
    finally:
        if up.poll() is None:
            up.send_signal(signal.SIGTERM)
        _, err = up.communicate(timeout=DEADLINE)
    assert up.returncode == 0, err
    assert not info.exists()
