"""The bill: dollars recomputed from the stub's ledger with genai-prices, and the rows beyond the deck that
set two runs side by side (a slow model's recovery, an idempotency key)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from genai_prices import Usage, calc_price
from support import DEADLINE

from paidtwice._exceptions import UsageError
from paidtwice.deck import COMPARISONS, Deck
from paidtwice.deck._experiments import SLOW_MODEL_LATENCY
from paidtwice.lab import PRICES_AS_OF, Lab, check_price_model
from paidtwice.report import format_comparison
from paidtwice.results import RunRecord
from paidtwice.stub import ModelCall


def _priced(calls: list[ModelCall], model: str) -> Decimal:
    total = Decimal(0)
    for call in calls:
        assert call.billed is not None, "every call of a settled run is closed"
        total += calc_price(
            Usage(input_tokens=call.billed.prompt_tokens, output_tokens=call.billed.completion_tokens),
            model,
            genai_request_timestamp=datetime.fromtimestamp(call.started, UTC),
        ).total_price
    return total


def _added_by_the_crash(calls: list[ModelCall]) -> list[ModelCall]:
    """Written again here from the rule: a run without a crash pays one delivered answer per turn."""
    answered: set[int] = set()
    added = []
    for call in calls:
        if call.delivered is True and call.turn not in answered:
            answered.add(call.turn)
        else:
            added.append(call)
    return added


@pytest.mark.parametrize("name", ["naive-changed-for-good", "journaled-kill-mid-call", "naive-kill-in-pause"])
def test_extra_cost_is_the_extra_calls_usage_priced_with_genai_prices(
    lab: Lab, deck_records: dict[str, RunRecord], name: str
) -> None:
    record = deck_records[name]
    calls = lab.stub.ledger.model_calls(record.lane, record.invocation_id)
    assert len(calls) == record.model_calls
    added = _added_by_the_crash(calls)
    assert record.price_model == "gpt-4o-mini" and record.prices_as_of == PRICES_AS_OF
    assert record.extra_cost_usd == pytest.approx(float(_priced(added, "gpt-4o-mini")), abs=1e-12)
    assert record.cost_usd == pytest.approx(float(_priced(calls, "gpt-4o-mini")), abs=1e-12)
    assert record.extra_cost_usd > 0
    assert record.usage.prompt_tokens == sum(c.billed.prompt_tokens for c in calls if c.billed)
    assert sum(line.extra for line in record.model_log) == len(added)


def test_a_call_cut_off_in_flight_is_billed_its_prompt_and_part_of_its_answer(
    lab: Lab, deck_records: dict[str, RunRecord]
) -> None:
    record = deck_records["journaled-kill-mid-call"]
    first = lab.stub.ledger.model_calls(record.lane, record.invocation_id)[0]
    assert first.delivered is False and first.billed is not None
    assert first.billed.prompt_tokens == first.usage.prompt_tokens > 0
    assert first.billed.completion_tokens < first.usage.completion_tokens
    assert record.model_log[0].extra and not record.model_log[1].extra


def test_an_unknown_price_model_is_one_line_naming_close_names() -> None:
    with pytest.raises(UsageError, match=r"no price for model 'gpt-4o-mni'.*close: gpt-4o-mini"):
        check_price_model("gpt-4o-mni")
    assert check_price_model("gpt-4o") == "gpt-4o"


def test_slow_model_naive_recovery_exceeds_journaled_by_a_model_latency(lab: Lab) -> None:
    row = next(r for r in COMPARISONS if r.name == "slow-model-recovery")
    record = Deck(lab).run_comparison(row)
    naive, journaled = record.runs
    assert (naive.mode, journaled.mode) == ("naive", "journaled")
    parts, regained = [], []
    for run in record.runs:
        assert run.status == "completed" and run.model_latency == SLOW_MODEL_LATENCY
        assert run.recovery_s is not None and run.retry_wait_s is not None
        assert run.recovery_breakdown is not None and run.recovery_breakdown.regain_s is not None
        parts.append(run.recovery_breakdown)
        regained.append(run.recovery_breakdown.regain_s)
    a, b = parts

    # The claim: the naive agent takes at least one model latency longer to regain what the kill lost (it
    # asks the model again for the answer its journal lacks; the journaled replay reads it back).
    assert record.regain_difference_s is not None
    assert record.regain_difference_s == pytest.approx(regained[0] - regained[1], abs=0.002)
    assert record.regain_difference_s >= SLOW_MODEL_LATENCY
    assert record.checks[0].ok and record.matches

    # Every figure from its own log. The recovery's model calls, from the ledger: the naive replay asks
    # again for the answer the journal lacks, the journaled one only for the turn it had not reached.
    def recovery_calls(run: RunRecord) -> list[ModelCall]:
        calls = lab.stub.ledger.model_calls(run.lane, run.invocation_id)
        assert run.started_at is not None and run.killed_at is not None
        return [c for c in calls if c.started > run.started_at + run.killed_at]

    counted = (len(recovery_calls(naive)), len(recovery_calls(journaled)))
    assert (a.model_calls, b.model_calls) == counted == (2, 1)
    for run, part, regain in ((naive, a, regained[0]), (journaled, b, regained[1])):
        held = [c.finished - c.started for c in recovery_calls(run) if c.finished is not None]
        assert part.model_wait_s == pytest.approx(sum(held), abs=0.002)
        assert all(h >= SLOW_MODEL_LATENCY for h in held)
        # The naive agent's regain holds a whole model call; the journaled one's holds none.
        assert (regain >= SLOW_MODEL_LATENCY) == (run is naive)
    # Only the journaled agent waits for the journal to take an answer (its post-pause model call).
    assert (a.journal_round_trips, b.journal_round_trips) == (0, 1)
    assert a.journal_wait_s == 0
    # The handler waits for one thing at a time: the model waits and the round trips fit, without overlap,
    # in what is left of the recovery after the retry timer.
    assert a.other_s >= 0 and b.other_s >= 0
    assert naive.recovery_s is not None and journaled.recovery_s is not None
    assert record.recovery_difference_s == pytest.approx(naive.recovery_s - journaled.recovery_s, abs=0.002)
    assert naive.extra_cost_usd > 0 and journaled.extra_cost_usd == 0
    text = format_comparison(record)
    assert f"regain difference: {record.regain_difference_s:.3f} s" in text
    assert f"{journaled.name}: " in text and f"{b.journal_round_trips} journal round trip " in text


def test_idempotency_key_makes_a_booking_killed_in_flight_happen_once(lab: Lab) -> None:
    row = next(r for r in COMPARISONS if r.name == "idempotent-tool-kill-mid-call")
    record = Deck(lab).run_comparison(row)
    without, with_key = record.runs
    assert (without.idempotency_key, with_key.idempotency_key) == ("none", "request-id")
    effects = []
    for run in record.runs:
        bookings = lab.stub.ledger.bookings(run.lane, run.invocation_id)
        assert len(bookings) == run.bookings == 2, (
            "the kill cut the first request off; the replay sent one more"
        )
        assert bookings[0].delivered is False
        effects.append(sum(1 for b in bookings if b.effect))
    assert effects == [without.booking_effects, with_key.booking_effects] == [2, 1]
    keyed = lab.stub.ledger.bookings(with_key.lane, with_key.invocation_id)
    assert keyed[0].key == keyed[1].key == f"{with_key.invocation_id}:book"
    assert keyed[0].booking_id == keyed[1].booking_id
    assert record.matches


def test_a_key_from_ctx_uuid_drawn_outside_the_action_is_stable_too(lab: Lab) -> None:
    row = next(r for r in COMPARISONS if r.name == "idempotent-tool-kill-mid-call")
    keyed = dataclasses.replace(row.second, name="idempotent-tool-kill-mid-call-uuid", booking_key="uuid")
    record = Deck(lab).run(keyed)
    bookings = lab.stub.ledger.bookings(record.lane, record.invocation_id)
    assert len(bookings) == 2 and bookings[0].key == bookings[1].key != ""
    assert record.booking_effects == 1 and record.idempotency_key == "uuid"
    assert record.matches


def test_pricing_works_offline() -> None:
    """genai-prices' data ships in its wheel: pricing opens no connection (a process with sockets refused)."""
    code = (
        "import socket\n"
        "def refuse(*args, **kwargs):\n"
        "    raise OSError('no network here')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from paidtwice.lab._bill import check_price_model, _price\n"
        "from paidtwice.stub import TokenUsage\n"
        "import time\n"
        "print(check_price_model('gpt-4o'), _price(TokenUsage(1000, 100), 'gpt-4o', time.time()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    model, price = done.stdout.split()
    expected = calc_price(Usage(input_tokens=1000, output_tokens=100), "gpt-4o").total_price
    assert model == "gpt-4o" and Decimal(price) == expected > 0


def test_cli_unknown_price_model_is_one_line_and_exit_2() -> None:
    for command in (["run", "clean"], ["sweep"], ["deck"], ["soak"]):
        done = subprocess.run(
            [sys.executable, "-m", "paidtwice", *command, "--price-model", "gpt-4o-mni"],
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
        assert done.returncode == 2, (command, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "close: gpt-4o-mini" in lines[0] and "Traceback" not in done.stderr
