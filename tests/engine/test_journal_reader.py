"""The journal reader and reports on captured sys_journal rows, without a server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from paidtwice._exceptions import PaidtwiceError
from paidtwice.agent import CLEAN_JOURNALED_JOURNAL, CLEAN_NAIVE_JOURNAL
from paidtwice.engine import journal_from_rows
from paidtwice.engine._sql import invocation_status
from paidtwice.report import format_journal

FIXTURES = Path(__file__).parents[1] / "fixtures"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return data


def test_clean_naive_journal_reads_by_index() -> None:
    entries = journal_from_rows(load("clean.json")["sys_journal"])
    assert tuple(e.label() for e in entries) == CLEAN_NAIVE_JOURNAL
    assert [e.index for e in entries] == list(range(len(CLEAN_NAIVE_JOURNAL)))
    assert entries[1].name == "weather" and entries[1].is_command
    assert not entries[2].is_command


def test_journaled_journal_has_model_at_one_and_seven() -> None:
    entries = journal_from_rows(load("journaled-kill-in-pause.json")["sys_journal"])
    assert tuple(e.label() for e in entries) == CLEAN_JOURNALED_JOURNAL
    assert [e.index for e in entries if e.name == "model"] == [1, 7]


def test_rows_out_of_order_and_without_null_columns_are_read() -> None:
    rows = list(reversed(load("clean.json")["sys_journal"]))
    for row in rows:
        if not row.get("name"):
            row.pop("name", None)
    entries = journal_from_rows(rows)
    assert [e.index for e in entries] == sorted(e.index for e in entries)
    assert entries[2].name == ""


def test_journal_report_lists_every_entry_by_index() -> None:
    entries = journal_from_rows(load("journaled-kill-in-pause.json")["sys_journal"])
    text = format_journal(entries).splitlines()
    assert text[0].split() == ["index", "entry", "name"]
    body = text[2:]
    assert len(body) == len(entries)
    assert body[1].split() == ["1", "Command:", "Run", "model"]


def test_statuses_read_from_the_server_are_checked() -> None:
    # The statuses the captures recorded from a real server are known; one the code does not know is refused.
    for name in ("clean.json", "journaled-kill-in-pause.json", "naive-changed-for-good.json"):
        status = load(name)["status"]
        assert invocation_status(status) == status
    with pytest.raises(
        PaidtwiceError, match=r"^sys_invocation reports a status paidtwice does not know: 'inboxed'"
    ):
        invocation_status("inboxed")
