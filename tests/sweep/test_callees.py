"""Server-free checks of when a point's replay is said to wait on a call that cannot run: a callee paused at
once; a callee retrying against an address nothing listens on at the second look (never against the point's
own agent, which listens again after its restart); a callee that fails for another reason never."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from paidtwice.engine import InvocationRow, lease_port
from paidtwice.sweep._callees import CalleeWatch, Companions, unserved_call


def row(status: str, failure: str | None = None) -> InvocationRow:
    return InvocationRow(
        "inv_callee", "Rates/rate", status, None, 3, None, None, failure, None, None, 2, None, None
    )


@pytest.fixture
def free_port() -> Iterator[int]:
    """A port leased from the allocator that nothing listens on."""
    lease = lease_port()
    try:
        yield lease.port
    finally:
        lease.release()


def looks(watch: CalleeWatch, n: int) -> list[bool]:
    seen = []
    for _ in range(n):
        watch._next = 0.0  # the next look now, not a poll interval later
        seen.append(watch.stuck())
    return seen


def test_a_paused_callee_is_said_at_the_first_look() -> None:
    watch = CalleeWatch(lambda: [row("paused", "boom\nmore")], agent="http://127.0.0.1:1", calls=True)
    assert looks(watch, 1) == [True]
    assert (
        watch.why == "the call to Rates/rate (inv_callee) it waits on is paused (its retries given up): boom"
    )


def test_a_callee_whose_deployment_is_gone_is_said_at_the_second_look(free_port: int) -> None:
    failure = f"[500 Internal] error when calling 'http://127.0.0.1:{free_port}/': Connection refused"
    watch = CalleeWatch(lambda: [row("backing-off", failure)], agent="http://127.0.0.1:1", calls=True)
    assert looks(watch, 2) == [False, True]
    assert watch.why is not None and "cannot run, nothing serves it any more" in watch.why


def test_the_points_own_agent_down_for_its_restart_is_waited_for(free_port: int) -> None:
    failure = f"error when calling 'http://127.0.0.1:{free_port}/': Connection refused"
    watch = CalleeWatch(
        lambda: [row("backing-off", failure)], agent=f"http://127.0.0.1:{free_port}", calls=True
    )
    assert looks(watch, 3) == [False, False, False]


def test_a_callee_failing_in_its_own_code_is_waited_for() -> None:
    watch = CalleeWatch(
        lambda: [row("backing-off", "ValueError: no rate")], agent="http://127.0.0.1:1", calls=True
    )
    assert looks(watch, 3) == [False, False, False]


def test_a_handler_that_made_no_call_asks_nothing() -> None:
    def callees() -> list[InvocationRow]:
        raise AssertionError("queried")

    assert looks(CalleeWatch(callees, agent="http://127.0.0.1:1", calls=False), 2) == [False, False]


class Closing:
    """Stands in for an agent: only its closing is looked at."""

    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_the_clean_runs_keep_only_the_agents_registered_last_for_a_service() -> None:
    first, second, other = Closing(), Closing(), Closing()
    companions = Companions()
    companions.keep(first, registered=1.0, services=frozenset({"Rates", "Chat"}))  # type: ignore[arg-type]
    companions.keep(second, registered=2.0, services=frozenset({"Rates", "Chat"}))  # type: ignore[arg-type]
    companions.keep(other, registered=1.5, services=frozenset({"Desk"}))  # type: ignore[arg-type]
    companions.prune()
    assert (first.closed, second.closed, other.closed) == (True, False, False)
    companions.close()
    assert second.closed and other.closed


def test_a_call_to_a_handler_nothing_serves_ends_the_clean_run_with_why() -> None:
    # The server's words for an attempt whose Call went to a service no deployment serves (restate-server
    # 1.7.12); it retries such a call until one is registered, so the sweep stops at the first.
    failure = (
        "[500 Internal] cannot process command Command: Call (command index 1) because of a failed "
        "precondition: the service handler Remote/lookup was not found"
    )
    why = unserved_call(row("backing-off", failure), "Caller/run")
    assert why is not None
    assert why.startswith("the clean run of Caller/run calls Remote/lookup, which no deployment")
    assert unserved_call(row("backing-off", "ValueError: no rate"), "Caller/run") is None
    assert unserved_call(None, "Caller/run") is None
