"""Polling the server: the thread that polls sys_invocation for every live invocation, what it saw of each
one's attempts, and `wait_for`, the one loop the lab's users wait on (poll until it holds, `ExperimentError`
after a timeout, `LabCancelled` when told to stop)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from paidtwice._exceptions import ExperimentError, LabCancelled, PaidtwiceError
from paidtwice.agent import AgentAttempt, number_attempts
from paidtwice.engine import InvocationRow, SqlClient, epoch, wait_until

__all__ = ["PolledAttempt", "PolledAttempts", "Poller", "settled", "wait_for"]

POLL = 0.02
"""Seconds between two polls: the poller's, and `wait_for`'s."""


PATIENCE = 5.0
"""A wait told what its run's progress is goes on past its timeout while that progress moves, up to this many
times the timeout in all: on a busy machine a run that works takes the wall time its share of a core does."""


def wait_for(
    what: str,
    condition: Callable[[], bool],
    *,
    timeout: float,
    stop: Callable[[], bool],
    progress: Callable[[], Hashable] | None = None,
) -> None:
    """Poll `condition` until it holds.

    Raises `ExperimentError` after `timeout` seconds, naming `what` was awaited, and `LabCancelled` as soon as
    `stop` holds (the lab was interrupted, or a sweep's point failed). A condition that holds wins over both.
    With `progress` (a cheap read of how far the run got), `timeout` counts from the last time it changed,
    up to `PATIENCE` times `timeout` in all: a run still moving is not given up because the machine is slow.
    """
    held = gave_up = False
    began = moved = time.monotonic()
    seen = progress() if progress is not None else None
    bound = timeout if progress is None else PATIENCE * timeout

    def done() -> bool:
        nonlocal held, gave_up, moved, seen
        held = condition()
        if held or stop():
            return True
        now = time.monotonic()
        if progress is not None and (read := progress()) != seen:
            seen, moved = read, now
        gave_up = now - moved >= timeout or now - began >= bound
        return gave_up

    wait_until(done, timeout=bound + POLL, interval=POLL)
    if held:
        return
    if gave_up or not stop():
        raise ExperimentError(f"timed out after {time.monotonic() - began:.0f}s waiting for {what}")
    raise LabCancelled(f"interrupted while waiting for {what}")


@dataclass
class PolledAttempt:
    start: float
    backoff_from: float | None = None
    backoff_until: float | None = None


@dataclass
class PolledAttempts:
    """What polling saw of one invocation's attempts: one entry per distinct last_start_at."""

    invocation_id: str
    attempts: dict[str, PolledAttempt] = field(default_factory=dict)
    last_backoff_retry_count: int = 0
    """retry_count of the latest backing-off state seen: the attempts made so far at that moment."""
    running_retry_count: int = 0
    """Highest retry_count seen in any other state: there it numbers the attempt under way, so it counts the
    attempts made so far, this one included, and it lasts as long as the attempt runs (seconds, in the
    deck's runs), not only the backoff between two attempts."""
    last: InvocationRow | None = None

    def observe(self, row: InvocationRow | None) -> InvocationRow | None:
        if row is None:
            return None
        self.last = row
        if row.last_start_at:
            attempt = self.attempts.setdefault(
                row.last_start_at, PolledAttempt(start=epoch(row.last_start_at) or time.time())
            )
            if row.status == "backing-off" and attempt.backoff_from is None:
                attempt.backoff_from = time.time()
                attempt.backoff_until = epoch(row.next_retry_at)
        if row.status == "backing-off" and row.retry_count is not None:
            self.last_backoff_retry_count = max(self.last_backoff_retry_count, row.retry_count)
        elif row.retry_count is not None:
            self.running_retry_count = max(self.running_retry_count, row.retry_count)
        return row

    def attempts_seen(self) -> int:
        """Attempts made, from everything seen: each backing-off state is followed by one more attempt."""
        backoff = self.last_backoff_retry_count + 1 if self.last_backoff_retry_count else 0
        return max(len(self.attempts), backoff, self.running_retry_count)

    def ordered(self) -> list[PolledAttempt]:
        return sorted(self.attempts.values(), key=lambda a: a.start)

    def count(self, agent: Sequence[AgentAttempt] = ()) -> int:
        """How many attempts were made.

        The count comes from the wire (`agent`: every attempt that reached the agent, numbered by the
        server's own retry count, so the attempts made while the agent was down are in it too). What
        polling saw is a floor under it: an attempt made after the last one that reached the agent is seen
        only there.
        """
        numbers = number_attempts(agent)
        return max(numbers[-1] if numbers else 0, self.attempts_seen(), 1)


class Poller:
    """One thread that polls sys_invocation for every live run of the lab, in a single query.

    `sql` gives the client to ask each time: on a cluster, it asks a node that is alive now."""

    def __init__(self, sql: Callable[[], SqlClient], cancelled: threading.Event) -> None:
        self._sql = sql
        self._cancelled = cancelled
        self._live: dict[str, PolledAttempts] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="paidtwice-poll")
        self._thread.start()

    def follow(self, invocation_id: str) -> PolledAttempts:
        """Poll the invocation until `forget`; what is seen lands in the returned `PolledAttempts`."""
        polled = PolledAttempts(invocation_id)
        with self._lock:
            self._live[invocation_id] = polled
        return polled

    def forget(self, invocation_id: str) -> None:
        with self._lock:
            self._live.pop(invocation_id, None)

    def poll(self) -> None:
        with self._lock:
            live = dict(self._live)
        if not live:
            return
        rows = self._sql().invocations(list(live))
        with self._lock:
            for invocation_id, polled in live.items():
                polled.observe(rows.get(invocation_id))

    def _loop(self) -> None:
        while not self._stop.is_set() and not self._cancelled.is_set():
            try:
                self.poll()
            except PaidtwiceError:
                pass
            self._stop.wait(POLL)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)


def settled(row: InvocationRow | None) -> bool:
    """The invocation is done with, for now: completed, or paused waiting for someone."""
    return row is not None and row.status in ("completed", "paused")
