"""How long a replay is waited for: while its code works, however slowly a loaded machine lets it; not once
its code waits on something nothing gives; never past the overall bound (journals built by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paidtwice import UsageError
from paidtwice.replay import JournalFile, RecordedEntry, Replayer, random_seed

AGENT_DIR = Path(__file__).parent
INVOCATION = "inv_1ecaIa0k5pAs45dsK4IKJzNTAtFWi21ASR"


def _bytes_field(number: int, value: bytes) -> bytes:
    assert len(value) < 128
    return bytes([number << 3 | 2, len(value)]) + value


def journal(handler: str, seconds: float) -> JournalFile:
    """The Input command alone (field 14: the value, field 1 of it: the bytes): the handler runs on live."""
    value = _bytes_field(14, _bytes_field(1, json.dumps(seconds).encode()))
    return JournalFile(
        invocation_id=INVOCATION,
        service="Waiting",
        handler=handler,
        key=None,
        protocol_version=6,
        status="paused",
        deployment_id=None,
        random_seed=random_seed(INVOCATION),
        random_seed_source="derived",
        entries=(RecordedEntry(0, "Command: Input", "", value, ""),),
    )


def test_a_replay_waiting_on_nothing_is_stuck_once_its_code_did_nothing_for_the_window() -> None:
    with Replayer("waiting_agent:app", app_dir=AGENT_DIR, stalled_after=1.0) as replayer:
        result = replayer.replay_journal(journal("stuck", 0), raise_on_divergence=False)
    assert result.verdict == "undecided"
    assert result.message.startswith("the replay is stuck: nothing ran for 1s"), result.message


def test_a_replay_working_past_the_window_is_waited_for() -> None:
    # Four seconds of work against a one-second window: the window counts idleness, not wall time.
    with Replayer("waiting_agent:app", app_dir=AGENT_DIR, stalled_after=1.0) as replayer:
        result = replayer.replay_journal(journal("busy", 4.0), raise_on_divergence=False)
    assert result.verdict == "continues", result.message


def test_a_replay_still_working_at_the_overall_bound_is_given_up_and_says_how_to_wait_longer() -> None:
    with Replayer("waiting_agent:app", app_dir=AGENT_DIR, timeout=1.0) as replayer:
        result = replayer.replay_journal(journal("busy", 30.0), raise_on_divergence=False)
    assert result.verdict == "undecided"
    assert "still running after 1s" in result.message and "PAIDTWICE_REPLAY_TIMEOUT" in result.message


def test_the_overall_bound_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAIDTWICE_REPLAY_TIMEOUT", "45")
    assert Replayer("waiting_agent:app", app_dir=AGENT_DIR).timeout == 45.0
    assert Replayer("waiting_agent:app", app_dir=AGENT_DIR, timeout=5.0).timeout == 5.0
    monkeypatch.setenv("PAIDTWICE_REPLAY_TIMEOUT", "soon")
    with pytest.raises(UsageError, match="PAIDTWICE_REPLAY_TIMEOUT='soon' is not a positive number"):
        Replayer("waiting_agent:app", app_dir=AGENT_DIR)
