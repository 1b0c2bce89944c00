"""The stub's usage, billing of calls cut off in flight, latency and the booking endpoint (no Restate)."""

from __future__ import annotations

import concurrent.futures
import math
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from support import assert_eventually

from paidtwice.stub import SCRIPTS, Hold, Lane, ModelCall, StubModel, TokenUsage, script_by_name
from paidtwice.stub._turns import ScriptFileError, load_script_file
from paidtwice.stub._usage import estimate_completion, estimate_prompt

MESSAGES = [{"role": "user", "content": "What should I wear in Paris today?"}]


@pytest.fixture(scope="module")
def stub() -> Iterator[StubModel]:
    with StubModel() as running:
        yield running


def test_answers_carry_usage_by_the_written_rule_and_the_ledger_bills_it(stub: StubModel) -> None:
    lane = stub.open_lane(SCRIPTS["steady"])
    body = httpx.post(f"{lane.base_url}/chat/completions", json={"model": "m", "messages": MESSAGES}).json()
    usage = body["usage"]
    message = body["choices"][0]["message"]
    call = message["tool_calls"][0]["function"]
    assert usage["prompt_tokens"] == 3 + 4 + math.ceil(len(MESSAGES[0]["content"]) / 4)
    assert usage["completion_tokens"] == math.ceil(len(message["content"]) / 4) + math.ceil(
        len(call["name"] + call["arguments"]) / 4
    )
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert_eventually(lambda: lane.model_calls()[0].delivered is True, what="the call to be closed")
    (recorded,) = lane.model_calls()
    assert recorded.billed == recorded.usage == TokenUsage(usage["prompt_tokens"], usage["completion_tokens"])
    assert estimate_prompt(MESSAGES) == usage["prompt_tokens"]
    assert (
        estimate_completion(message["content"], call["name"], call["arguments"]) == usage["completion_tokens"]
    )


def test_a_script_file_sets_a_turns_usage(stub: StubModel, tmp_path: Path) -> None:
    path = tmp_path / "script.toml"
    path.write_text('[[turn]]\ntext = "Hi."\nusage = { prompt_tokens = 1200, completion_tokens = 40 }\n')
    lane = stub.open_lane(load_script_file(path))
    body = httpx.post(f"{lane.base_url}/chat/completions", json={"messages": MESSAGES}).json()
    assert (body["usage"]["prompt_tokens"], body["usage"]["completion_tokens"]) == (1200, 40)
    path.write_text('[[turn]]\ntext = "Hi."\nusage = { prompt = 1 }\n')
    with pytest.raises(ScriptFileError, match="unknown `usage` key 'prompt'"):
        load_script_file(path)


def test_a_call_cut_off_is_billed_its_prompt_and_what_was_generated(stub: StubModel) -> None:
    lane = stub.open_lane(script_by_name("hold", hold=Hold(1, 4.0)))
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{lane.base_url}/chat/completions", json={"messages": MESSAGES}, timeout=1.0)
    assert_eventually(lambda: lane.model_calls()[0].delivered is False, what="the stub to see the caller go")
    call = lane.model_calls()[0]
    assert call.billed is not None and call.finished is not None
    assert call.billed.prompt_tokens == call.usage.prompt_tokens
    share = (call.finished - call.started) / 4.0
    assert call.billed.completion_tokens < call.usage.completion_tokens
    assert abs(call.billed.completion_tokens - call.usage.completion_tokens * share) <= 1


def _cut_off_after(lane: Lane, seconds: float) -> ModelCall:
    """The lane's first call, its caller gone after `seconds`."""
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{lane.base_url}/chat/completions", json={"messages": MESSAGES}, timeout=seconds)
    assert_eventually(lambda: lane.model_calls()[0].delivered is False, what="the stub to see the caller go")
    return lane.model_calls()[0]


def test_a_call_the_lab_holds_is_billed_for_its_moment_whenever_the_caller_left(stub: StubModel) -> None:
    """A sweep's hold and a deck row's held call keep a moment open until the kill: the bill is the moment's
    (`billed_after` seconds in), the same for a kill that came soon and one that came late."""
    held = [stub.open_lane(script_by_name("hold", hold=Hold(1, 4.0, billed_after=1.0))) for _ in range(2)]
    rows = [stub.open_lane(script_by_name("hold", hold=Hold(1, 4.0))) for _ in range(2)]
    for lane in rows:
        lane.model_call_held, lane.model_call_billed_after = 1, 2.0
    for lanes, share in ((held, 1.0 / 4.0), (rows, 2.0 / 4.0)):
        soon, late = _cut_off_after(lanes[0], 0.2), _cut_off_after(lanes[1], 1.6)
        assert late.finished is not None and soon.finished is not None
        assert late.finished - late.started > soon.finished - soon.started + 1.0
        assert (
            soon.billed
            == late.billed
            == TokenUsage(soon.usage.prompt_tokens, math.floor(soon.usage.completion_tokens * share))
        )
        assert 0 < soon.billed.completion_tokens < soon.usage.completion_tokens


def test_model_latency_holds_every_answer(stub: StubModel) -> None:
    lane = stub.open_lane(SCRIPTS["steady"])
    lane.latency = 0.5
    httpx.post(f"{lane.base_url}/chat/completions", json={"messages": MESSAGES}, timeout=30.0)
    assert_eventually(lambda: lane.model_calls()[0].delivered is True, what="the call to be closed")
    (call,) = lane.model_calls()
    assert call.finished is not None and call.finished - call.started >= 0.5


def test_a_booking_with_a_key_has_one_effect_and_without_a_key_one_per_request(stub: StubModel) -> None:
    lane = stub.open_lane(SCRIPTS["steady"])
    lane.booking_seconds = 0.5
    url = f"{lane.tools_url}/book"
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        keyed = list(pool.map(lambda _: httpx.post(url, headers={"Idempotency-Key": "k1"}).json(), range(2)))
    assert keyed[0]["booking_id"] == keyed[1]["booking_id"]
    httpx.post(url)
    httpx.post(url)
    bookings = lane.bookings()
    assert [b.effect for b in bookings].count(True) == 3
    assert [b.key for b in bookings] == ["k1", "k1", "", ""]


def test_crash_points_cover_the_clean_run_time_from_their_moment_to_the_next() -> None:
    from paidtwice.targets._timeline import StepEvent, derive_points

    events = [
        StepEvent("model_start", 1, "", "", 100.0),
        StepEvent("model_end", 1, "", "", 101.0),
        StepEvent("op", 1, "pause", "sleep", 101.5),
        StepEvent("model_start", 2, "", "", 106.0),
        StepEvent("model_end", 2, "", "", 107.0),
    ]
    journal = ("Command: Input", "Command: Sleep", "Notification: Sleep", "Command: Output")
    points = derive_points(events, journal, ended=108.0)
    covers = {p.name: round(p.covers, 3) for p in points}
    assert covers["in flight: model call 1"] == round(1.0 / 8, 3)
    assert covers["in pause"] == round(4.5 / 8, 3)  # until the handler went on
    assert covers["after model call 2 returned (not journaled)"] == round(1.0 / 8, 3)
    assert sum(p.covers for p in points) == pytest.approx(1.0)
