"""Load with faults, small: nothing lost, and the kills cost at most the calls they cut off."""

from __future__ import annotations

from paidtwice.lab import Lab
from paidtwice.lab._soak import soak


def test_small_soak_loses_nothing(lab: Lab) -> None:
    record = soak(lab, invocations=24, kills=2)
    assert record.sent == 24
    assert record.lost == 0
    assert record.completed + record.paused == 24
    assert 0 <= record.extra_model_calls <= record.in_flight_at_kills
    assert record.throughput > 0
    # The bill: every call priced, the kills' share of it no more than the whole.
    assert record.price_model == "gpt-4o-mini" and record.usage.prompt_tokens > 0
    assert 0 < record.cost_usd and 0 <= record.extra_cost_usd <= record.cost_usd
