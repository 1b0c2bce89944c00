"""How `watch` counts a stuck invocation's attempts from what sys_invocation shows between two reads.

The server's counter, read every 20 ms on 1.7 (pause after 10 attempts): backing-off k after k attempts
failed, running k while the k-th runs, and NULL once paused. A watch reads it now and then, so it may see
the last attempt run or only the backoff before it."""

from __future__ import annotations

import pytest

from paidtwice.watch._scan import Scanner


def attempts_at_pause(reads: list[tuple[str, int | None]]) -> int | None:
    scanner = Scanner(nodes=(), price_model="gpt-4o-mini")
    counted = None
    for status, retry_count in reads:
        counted, _ = scanner._count("inv_1", status, retry_count)
    return counted


@pytest.mark.parametrize(
    "reads",
    [
        [("backing-off", 8), ("backing-off", 9), ("paused", None)],
        [("backing-off", 9), ("running", 10), ("paused", None)],
        [("running", 9), ("backing-off", 9), ("running", 10), ("paused", None)],
        [("running", 10), ("paused", None), ("paused", None)],
    ],
)
def test_the_attempt_that_paused_it_is_counted_once(reads: list[tuple[str, int | None]]) -> None:
    assert attempts_at_pause(reads) == 10


def test_paused_before_any_read_is_unknown() -> None:
    assert attempts_at_pause([("paused", None)]) is None
