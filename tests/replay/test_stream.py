"""`replay-check DIR` on many files: each file gets the verdict it gets alone, the journals are read as a
stream (a chunk at a time, not all first), the --json array is whole after the run, and a bad file among
many is refused before any replay."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from replay.test_replay_corpus import deck_app
from support import DEADLINE

from paidtwice.replay import Replayer, load_journal, save_journal
from paidtwice.replay._replayer import STREAM_CHUNK
from paidtwice.results import record_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FILES = 200


def many_files(directory: Path, count: int) -> list[Path]:
    """`count` journal files of the naive agent, served as "Agent": the corpus's prefixes (which continue
    or diverge) and its complete run, over and over under names of their own."""
    sources = sorted((FIXTURES / "corpus").glob("naive-*.json")) + [FIXTURES / "journals" / "clean.json"]
    journals = [dataclasses.replace(load_journal(p), service="Agent") for p in sources]
    return [
        save_journal(directory / f"{number:04d}.json", journals[number % len(journals)])
        for number in range(count)
    ]


def replay_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paidtwice", "replay-check", "--app", "paidtwice.agent.weather:app", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PAIDTWICE_AGENT_MODE": "naive", "PAIDTWICE_SERVICE": "Agent"},
        timeout=DEADLINE,
    )


def comparable(record: dict[str, Any]) -> str:
    # The URL a model call was made to is the one the app was built with (the stub's port is its own in
    # each process); the rest of a record is the same.
    return re.sub(r'"url": "[^"]*"', '"url": "..."', json.dumps(record, sort_keys=True))


def test_many_files_in_one_command_give_each_the_verdict_it_gets_alone(tmp_path: Path) -> None:
    files = many_files(tmp_path / "journals", FILES)
    out = tmp_path / "records.json"
    done = replay_check("--script", "changed", "--json", str(out), str(tmp_path / "journals"))
    assert done.returncode == 1, done.stderr  # some diverge
    records = json.loads(out.read_text())  # the array written record by record is whole
    assert [r["path"] for r in records] == [str(p) for p in files]
    with Replayer(deck_app("naive"), script="changed", concurrency=1) as alone:
        reference = [
            record_json(alone.replay_journal(load_journal(p), raise_on_divergence=False)) for p in files
        ]
    assert [comparable(r) for r in records] == [comparable(r) for r in reference]
    assert {"continues", "diverges"} <= {r["verdict"] for r in records}


def test_a_stream_reads_a_chunk_at_a_time(tmp_path: Path) -> None:
    files = many_files(tmp_path, 3 * STREAM_CHUNK)
    pulled: list[Path] = []

    def journals() -> Iterator[Path]:
        for path in files:
            pulled.append(path)
            yield path

    with Replayer(deck_app("naive")) as replayer:
        stream = replayer.replay_stream(journals())
        first = next(stream)
        assert len(pulled) == STREAM_CHUNK  # not every journal before the first result
        rest = list(stream)
    assert len(pulled) == len(files) and 1 + len(rest) == len(files)
    assert first.path == str(files[0]) and [r.path for r in rest] == [str(p) for p in files[1:]]


@pytest.mark.parametrize("json_to", [None, "-", "records.json"])
def test_a_bad_file_among_many_is_refused_before_any_replay(tmp_path: Path, json_to: str | None) -> None:
    journals = tmp_path / "journals"
    many_files(journals, 2 * STREAM_CHUNK)
    (journals / f"{2 * STREAM_CHUNK - 1:04d}.json").write_text("{not json")
    out = ["--json", json_to if json_to == "-" else str(tmp_path / json_to)] if json_to else []
    done = replay_check(*out, str(journals))
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""  # not a record, not a row: the journals are checked before the first replay
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journals"]  # nor a file, whole or half
    assert "is not JSON" in done.stderr and "Traceback" not in done.stderr
