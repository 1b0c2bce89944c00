"""A running deck as a user runs it: Ctrl-C, SIGKILL of paidtwice, loopback sockets, two decks at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from support import assert_eventually
from test_hygiene import LOOPBACK, listening_addresses

ROWS = ["--only", "clean", "--only", "naive-changed-for-good", "--only", "naive-kill-in-pause"]


def _children() -> dict[int, list[int]]:
    """Live processes by parent, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def descendants(pid: int) -> set[int]:
    """Every live process below `pid`, found by parent links in /proc."""
    children = _children()
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def grandchildren(pid: int) -> set[int]:
    """Processes started by the processes `pid` started: the agents its fork server forked."""
    children = _children()
    return {grandchild for child in children.get(pid, []) for grandchild in children.get(child, [])}


def alive(pid: int) -> bool:
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def start_deck(tmp_path: Path, name: str, rows: list[str]) -> tuple[subprocess.Popen[str], Path]:
    out = tmp_path / f"{name}.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "paidtwice", "deck", *rows, "--json", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    return process, out


def finished(out: Path) -> list[dict[str, object]]:
    try:
        records: list[dict[str, object]] = json.loads(out.read_text())
    except (OSError, ValueError):
        return []
    return records


def test_ctrl_c_stops_everything_and_keeps_finished_records(tmp_path: Path) -> None:
    deck, out = start_deck(tmp_path, "interrupted", ROWS)
    try:
        assert_eventually(lambda: len(finished(out)) >= 1, timeout=120, what="a finished row on disk")
        started = descendants(deck.pid)
        assert started, "the deck runs a server and agents"
        # Every socket the running deck listens on, in every process it started, is on loopback.
        for pid in [deck.pid, *started]:
            try:
                addresses = listening_addresses(pid)
            except OSError:
                continue
            assert all(a.startswith(LOOPBACK + ":") for a in addresses), (pid, addresses)
        interrupted_at = time.monotonic()
        deck.send_signal(signal.SIGINT)
        deck.wait(timeout=5)
        assert_eventually(lambda: not any(alive(p) for p in started), timeout=1, what="every child gone")
        assert time.monotonic() - interrupted_at < 5
        assert deck.returncode == 130
        assert "interrupted" in (deck.stderr.read() if deck.stderr else "")
        records = finished(out)
        assert records and all(r["name"] in {"clean", "naive-kill-in-pause"} for r in records)
    finally:
        deck.kill()
        deck.wait()


def test_sigkill_of_paidtwice_takes_its_processes_with_it(tmp_path: Path) -> None:
    deck, out = start_deck(tmp_path, "killed", ["--only", "naive-changed-for-good"])
    try:
        # The server, the fork server, and an agent forked by the fork server.
        assert_eventually(lambda: len(grandchildren(deck.pid)) >= 1, timeout=60, what="an agent")
        started = descendants(deck.pid)
        assert len(started) >= 3, started
        deck.kill()
        deck.wait()
        assert_eventually(lambda: not any(alive(p) for p in started), timeout=10, what="orphans to die")
    finally:
        deck.kill()
        deck.wait()


def test_two_decks_at_once_do_not_collide(tmp_path: Path) -> None:
    rows = ["--only", "clean", "--only", "naive-kill-in-pause"]
    first, first_out = start_deck(tmp_path, "first", rows)
    second, second_out = start_deck(tmp_path, "second", rows)
    try:
        assert first.wait(timeout=180) == 0, first.stderr.read() if first.stderr else ""
        assert second.wait(timeout=180) == 0, second.stderr.read() if second.stderr else ""
    finally:
        for process in (first, second):
            process.kill()
            process.wait()
    for out in (first_out, second_out):
        records = finished(out)
        assert [r["name"] for r in records] == ["clean", "naive-kill-in-pause"]
        assert all(r["matches"] for r in records)
    ids = {r["invocation_id"] for out in (first_out, second_out) for r in finished(out)}
    assert len(ids) == 4
