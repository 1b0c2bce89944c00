"""What an offline replay does with an HTTP request that is not a model call: it is never sent, and the
replay stops there (journals built by hand from protocol messages; no server needed)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from paidtwice.replay import JournalFile, RecordedEntry, Replayer, random_seed

AGENT_DIR = Path(__file__).parents[1] / "replay"
INVOCATION = "inv_1ecaIa0k5pAs45dsK4IKJzNTAtFWi21ASR"


def _bytes_field(number: int, value: bytes) -> bytes:
    assert len(value) < 128
    return bytes([number << 3 | 2, len(value)]) + value


def journal(handler: str, *, with_step: bool) -> JournalFile:
    """An Input command (field 14: the value, field 1 of it: the bytes) and, optionally, the step done."""
    entries = [RecordedEntry(0, "Command: Input", "", _bytes_field(14, _bytes_field(1, b'"q"')), "")]
    if with_step:
        run = bytes([11 << 3, 1]) + _bytes_field(12, b"step")  # result_completion_id 1, name "step"
        done = bytes([1 << 3, 1]) + _bytes_field(5, _bytes_field(1, json.dumps("done").encode()))
        entries += [
            RecordedEntry(1, "Command: Run", "step", run, ""),
            RecordedEntry(2, "Notification: Run", "", done, ""),
        ]
    return JournalFile(
        invocation_id=INVOCATION,
        service="DirectTool",
        handler=handler,
        key=None,
        protocol_version=6,
        status="paused",
        deployment_id=None,
        random_seed=random_seed(INVOCATION),
        random_seed_source="derived",
        entries=tuple(entries),
    )


@pytest.fixture(scope="module")
def replayer() -> Iterator[Replayer]:
    with Replayer("direct_tool_agent:app", app_dir=AGENT_DIR) as running:
        yield running


@pytest.mark.parametrize("handler", ["run", "sync_call"])
def test_a_request_past_the_end_is_not_sent_and_is_what_comes_next(replayer: Replayer, handler: str) -> None:
    result = replayer.replay_journal(journal(handler, with_step=False))
    assert result.verdict == "continues"
    assert result.next_command is not None
    assert result.next_command.startswith("HTTP GET http://127.0.0.1:9/weather past the journal's end")
    assert result.outside_calls == ()


@pytest.mark.parametrize("handler", ["run", "sync_call"])
def test_a_request_during_the_replay_leaves_it_undecided(replayer: Replayer, handler: str) -> None:
    result = replayer.replay_journal(journal(handler, with_step=True), raise_on_divergence=False)
    assert result.verdict == "undecided"
    assert "outside the journal (not sent" in result.message


def test_the_async_api_replays_on_the_callers_loop() -> None:
    import asyncio

    async def check() -> tuple[str, str]:
        async with Replayer("direct_tool_agent:app", app_dir=AGENT_DIR) as replayer:
            past_end = await replayer.replay_journal_async(journal("run", with_step=False))
            [during] = await replayer.replay_journals_async([journal("run", with_step=True)])
            return past_end.verdict, during.verdict

    assert asyncio.run(check()) == ("continues", "undecided")


def test_a_batch_stops_each_request_as_alone(replayer: Replayer) -> None:
    # Requests stopped side by side on one loop (an async client's awaited, a sync client's raised): each
    # journal of the batch gets the verdict it gets alone.
    kinds = [(handler, step) for handler in ("run", "sync_call") for step in (False, True)]
    batch = [journal(handler, with_step=step) for handler, step in kinds] * 5
    alone = [replayer.replay_journal(j, raise_on_divergence=False) for j in batch]
    assert replayer.concurrency > 1
    assert replayer.replay_journals(batch) == alone
    assert [r.verdict for r in alone[:4]] == ["continues", "undecided"] * 2
