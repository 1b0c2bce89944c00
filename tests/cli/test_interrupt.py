"""A running deck as a user runs it: Ctrl-C, SIGTERM, SIGKILL of paidtwice, loopback, two decks at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from support import (
    DEADLINE,
    LOOPBACK,
    alive,
    assert_eventually,
    descendants,
    grandchildren,
    listening_addresses,
    temp_dirs_in_use,
)

ROWS = ["--only", "clean", "--only", "naive-changed-for-good", "--only", "naive-kill-in-pause"]
STOPPED = 120.0
"""Seconds a stopped deck and its children get to be gone: generous, for a loaded machine; it is a deadline,
not a speed target."""


def start_deck(
    tmp_path: Path, rows: list[str], *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "paidtwice", "deck", *rows, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, **(env or {})},
    )


def finished(out: Path | None) -> list[dict[str, object]]:
    try:
        records: list[dict[str, object]] = json.loads(out.read_text()) if out else []
    except (OSError, ValueError):
        return []
    return records


def results_in(directory: Path) -> Path | None:
    """The deck's record file in a results directory (named by the deck: deck-TIME-PID.json)."""
    found = sorted(directory.glob("deck-*.json"))
    return found[0] if found else None


def stop_and_check(
    deck: subprocess.Popen[str], out: Path, how: signal.Signals, status: int, said: str
) -> None:
    """Stop a deck that has finished a row; it exits with `status` and leaves no process and no directory."""
    assert_eventually(lambda: len(finished(out)) >= 1, timeout=180, what="a finished row on disk")
    started = descendants(deck.pid)
    assert started, "the deck runs a server and agents"
    directories = temp_dirs_in_use([deck.pid, *started])
    assert {d.name.split("-")[1] for d in directories} == {"lab", "restate"}, directories
    deck.send_signal(how)
    assert_eventually(lambda: deck.poll() is not None, timeout=STOPPED, what="the deck to exit")
    assert_eventually(lambda: not any(alive(p) for p in started), timeout=STOPPED, what="every child gone")
    assert deck.returncode == status
    assert said in (deck.stderr.read() if deck.stderr else "")
    records = finished(out)
    assert records and all(r["name"] in {"clean", "naive-kill-in-pause"} for r in records)
    assert_eventually(
        lambda: not any(d.exists() for d in directories), timeout=STOPPED, what=f"{directories} removed"
    )


def test_a_command_the_tests_start_takes_ctrl_c_however_the_suite_was_started() -> None:
    """A process started in the background of a script inherits SIGINT ignored, and Python keeps it so: a
    paidtwice started from such a suite would finish its work after the Ctrl-C tests' SIGINT (exit 0).
    conftest.py gives SIGINT back its default, so every command the tests start takes it as in a terminal.
    Run with `bash -c 'pytest ... &'` to see this fail without it."""
    probe = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


def test_ctrl_c_stops_everything_and_keeps_finished_records(tmp_path: Path) -> None:
    out = tmp_path / "interrupted.json"
    deck = start_deck(tmp_path, ROWS, "--json", str(out))
    try:
        assert_eventually(lambda: len(descendants(deck.pid)) >= 3, timeout=60, what="a server and agents")
        # Every socket the running deck listens on, in every process it started, is on loopback.
        for pid in [deck.pid, *descendants(deck.pid)]:
            try:
                addresses = listening_addresses(pid)
            except OSError:
                continue
            assert all(a.startswith(LOOPBACK + ":") for a in addresses), (pid, addresses)
        stop_and_check(deck, out, signal.SIGINT, 130, "interrupted")
    finally:
        deck.kill()
        deck.wait()


def test_sigterm_is_handled_as_ctrl_c_is(tmp_path: Path) -> None:
    # Results go where $PAIDTWICE_RESULTS says, as a CI job would collect them.
    results = tmp_path / "ci-results"
    deck = start_deck(tmp_path, ROWS, env={"PAIDTWICE_RESULTS": str(results)})
    try:
        assert_eventually(lambda: results_in(results) is not None, timeout=120, what="the deck's record file")
        out = results_in(results)
        assert out is not None
        stop_and_check(deck, out, signal.SIGTERM, 143, "terminated (SIGTERM)")
        assert not (tmp_path / "paidtwice-results").exists()
    finally:
        deck.kill()
        deck.wait()


def test_sigkill_of_paidtwice_takes_its_processes_and_directories_with_it(tmp_path: Path) -> None:
    deck = start_deck(tmp_path, ["--only", "naive-changed-for-good"], "--json", str(tmp_path / "killed.json"))
    try:
        # The server, the fork server, and an agent forked by the fork server.
        assert_eventually(lambda: len(grandchildren(deck.pid)) >= 1, timeout=60, what="an agent")
        started = descendants(deck.pid)
        assert len(started) >= 3, started
        directories = temp_dirs_in_use([deck.pid, *started])
        assert {d.name.split("-")[1] for d in directories} == {"lab", "restate"}, directories
        deck.kill()
        deck.wait()
        assert_eventually(lambda: not any(alive(p) for p in started), timeout=STOPPED, what="orphans to die")
        # No finally ran in paidtwice: the janitor, which outlives it by design, removed them.
        assert_eventually(
            lambda: not any(d.exists() for d in directories), timeout=STOPPED, what=f"{directories} removed"
        )
    finally:
        deck.kill()
        deck.wait()


def test_two_decks_at_once_do_not_collide(tmp_path: Path) -> None:
    rows = ["--only", "clean", "--only", "naive-kill-in-pause"]
    first_out = tmp_path / "first.json"
    first = start_deck(tmp_path, rows, "--json", str(first_out))
    second = start_deck(tmp_path, rows, "--results-dir", str(tmp_path / "second"))
    try:
        assert first.wait(timeout=DEADLINE) == 0, first.stderr.read() if first.stderr else ""
        assert second.wait(timeout=DEADLINE) == 0, second.stderr.read() if second.stderr else ""
    finally:
        for process in (first, second):
            process.kill()
            process.wait()
    second_out = results_in(tmp_path / "second")
    assert second_out is not None
    for out in (first_out, second_out):
        records = finished(out)
        assert [r["name"] for r in records] == ["clean", "naive-kill-in-pause"]
        assert all(r["matches"] for r in records)
    ids = {r["invocation_id"] for out in (first_out, second_out) for r in finished(out)}
    assert len(ids) == 4
