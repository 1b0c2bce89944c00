"""Reading RT0016 messages against the journal: both forms, and labels that are swapped."""

from __future__ import annotations

import json
from pathlib import Path

from paidtwice.engine import JournalEntry, journal_from_rows
from paidtwice.recover import read_mismatch

FIXTURES = Path(__file__).parents[1] / "fixtures"


def captured(name: str) -> tuple[str, list[JournalEntry]]:
    data = json.loads((FIXTURES / name).read_text())
    if "message" in data:
        return data["message"], journal_from_rows(data["sys_journal"])
    paused = [e for e in data["sys_journal_events"] if e["event_type"] == "Paused"][-1]
    message = json.loads(paused["event_json"])["last_failure"]["error_message"]
    return message, journal_from_rows(data["sys_journal"])


def test_operation_form_from_a_captured_pause() -> None:
    message, journal = captured("naive-changed-for-good.json")
    mismatch = read_mismatch(message, journal)
    assert mismatch is not None
    assert mismatch.index == 1
    assert mismatch.recorded == "run weather"
    assert mismatch.attempted == "handler return"
    assert mismatch.labels_agree is True
    assert mismatch.message == message


def test_swapped_labels_are_detected_and_read_the_right_way_round() -> None:
    message, journal = captured("mismatch-swapped-labels.json")
    mismatch = read_mismatch(message, journal)
    assert mismatch is not None
    assert mismatch.labels_agree is False
    assert mismatch.recorded == "run weather"
    assert mismatch.attempted == "handler return"


def test_name_difference_form() -> None:
    _, journal = captured("naive-changed-for-good.json")
    message = (
        "Found a mismatch between the code paths taken during the previous execution and the "
        "paths taken during this execution.\n"
        "- The mismatch happened while executing 'run' (index '1')\n"
        "- Difference:\n"
        "   name: weather != model\n"
    )
    mismatch = read_mismatch(message, journal)
    assert mismatch is not None
    assert (mismatch.index, mismatch.recorded, mismatch.attempted) == (
        1,
        "run weather",
        "run model",
    )
    assert mismatch.labels_agree is True
    swapped = read_mismatch(message.replace("weather != model", "model != weather"), journal)
    assert swapped is not None
    assert swapped.labels_agree is False
    assert swapped.attempted == "run model"


def test_other_failures_are_not_mismatches() -> None:
    journal = journal_from_rows(json.loads((FIXTURES / "clean.json").read_text())["sys_journal"])
    assert read_mismatch("error when calling: Connection refused (os error 111)", journal) is None


def test_the_index_is_the_journal_entry_with_the_command_index_beside_it() -> None:
    # The SDK counts commands only: its index 2 is the sleep, which the journal holds at entry 3.
    _, journal = captured("naive-changed-for-good.json")
    message = (
        "- The previous execution ran and recorded the following: 'sleep' (index '2')\n"
        "- The current execution attempts to perform the following: 'handler return'\n"
    )
    mismatch = read_mismatch(message, journal)
    assert mismatch is not None
    assert (mismatch.index, mismatch.command_index, mismatch.recorded) == (3, 2, "sleep")
    assert mismatch.where == "entry 3 (command index 2)"
    beyond = read_mismatch(message.replace("'2'", "'9'"), journal)
    assert beyond is not None and beyond.index is None
    assert beyond.where == "command index 9 (no such entry in the journal)"
