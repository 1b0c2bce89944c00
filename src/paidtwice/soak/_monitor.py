"""The soak's monitor: a thread that counts the soak's invocations per status on the server (one query per
poll), reports progress, and keeps the peak memory of the server and of each of the agent's lives; and the
wait until every invocation has settled."""

from __future__ import annotations

import resource
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from paidtwice._exceptions import LabCancelled, PaidtwiceError
from paidtwice.engine import RestateCluster
from paidtwice.lab import Lab
from paidtwice.results import PeakMemory
from paidtwice.soak._options import SoakOptions
from paidtwice.targets import Agent

__all__ = ["SETTLED", "Monitor", "SoakProgress"]

SETTLED = ("completed", "paused")
"""The statuses an invocation ends in."""
_POLL = 0.5


def _vm_hwm_mib(pid: int | None) -> float:
    """A live process's peak resident memory in MiB, from /proc; 0 if it is gone."""
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@dataclass(frozen=True)
class SoakProgress:
    """Where a soak stands, for a progress line."""

    sent: int
    """Invocations sent so far."""
    invocations: int
    """Invocations to send."""
    completed: int
    """Invocations completed so far."""
    kills: int
    """Kills done so far."""
    kills_planned: int
    """Kills to do."""
    elapsed: float
    """Seconds since the first send."""
    node_kills: int = 0
    """Cluster nodes killed so far."""
    node_kills_planned: int = 0
    """Cluster nodes to kill (0: not a cluster soak)."""

    @property
    def rate(self) -> float:
        """Completed invocations per second so far."""
        return self.completed / self.elapsed if self.elapsed > 0 else 0.0


class Monitor:
    """Counts the soak's invocations per status on the server (one query per poll), reports progress, and
    keeps the peak memory of the server and of each of the agent's lives."""

    def __init__(
        self,
        lab: Lab,
        service: str,
        agent: Agent,
        options: SoakOptions,
        progress: Callable[[SoakProgress], None] | None,
    ) -> None:
        self._lab, self._service, self._agent = lab, service, agent
        self._options, self._progress = options, progress
        self.started = time.time()
        """When the first invocation was sent (set by `start`)."""
        self._lock = threading.Lock()
        self._sent = 0
        self._kills = 0
        self._node_kills = 0
        self._counts: dict[str, int] = {}
        self._counted_at = 0.0
        self._agent_peak = 0.0
        self._server_peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="paidtwice-soak-monitor", daemon=True)

    def start(self) -> None:
        """Start polling, from now: the soak's clock starts with its first send."""
        self.started = time.time()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10.0)

    def sent_one(self) -> None:
        with self._lock:
            self._sent += 1

    def killed_one(self) -> None:
        with self._lock:
            self._kills += 1

    def killed_node(self) -> None:
        with self._lock:
            self._node_kills += 1

    def sample_memory(self) -> None:
        peak = _vm_hwm_mib(self._agent.pid)
        server = self._lab.server
        pids = (
            [node.process.pid for node in server.live_nodes() if node.process is not None]
            if isinstance(server, RestateCluster)
            else [server.pid]
        )
        server_peak = max((_vm_hwm_mib(pid) for pid in pids), default=0.0)
        with self._lock:
            self._agent_peak = max(self._agent_peak, peak)
            self._server_peak = max(self._server_peak, server_peak)

    def peak_memory(self) -> PeakMemory:
        self.sample_memory()
        return PeakMemory(
            server=round(self._server_peak, 1),
            agent=round(self._agent_peak, 1),
            paidtwice=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        )

    def _count(self) -> None:
        rows = self._lab.sql.query(
            "SELECT status, count(*) AS n FROM sys_invocation "
            f"WHERE target_service_name = '{self._service}' GROUP BY status"
        )
        counts = {str(row["status"]): int(row["n"]) for row in rows}
        with self._lock:
            self._counts, self._counted_at = counts, time.time()

    def settled(self) -> tuple[int, int, float]:
        """Invocations settled and in all (the clean one included), and when they were counted."""
        with self._lock:
            counts, at = self._counts, self._counted_at
        return sum(counts.get(status, 0) for status in SETTLED), sum(counts.values()), at

    def _report(self) -> None:
        if self._progress is None:
            return
        with self._lock:
            completed = max(0, self._counts.get("completed", 0) - 1)  # less the clean invocation
            snapshot = SoakProgress(
                sent=self._sent,
                invocations=self._options.invocations,
                completed=completed,
                kills=self._kills,
                kills_planned=self._options.kills,
                elapsed=time.time() - self.started,
                node_kills=self._node_kills,
                node_kills_planned=self._options.node_kills,
            )
        self._progress(snapshot)

    def _loop(self) -> None:
        reported = 0.0
        while not self._stop.is_set():
            try:
                self._count()
            except PaidtwiceError:
                pass
            self.sample_memory()
            if time.monotonic() - reported >= self._options.progress_every:
                reported = time.monotonic()
                self._report()
            self._stop.wait(_POLL)
        self._report()

    def wait_settled(self, expected: int, deadline_s: float, stall: float) -> str | None:
        """Wait until all `expected` invocations are settled; returns why it gave up, or None."""
        deadline = self.started + deadline_s
        last_settled, last_change = -1, time.time()
        while True:
            settled, total, counted_at = self.settled()
            if counted_at > 0 and total >= expected and settled >= total:
                return None
            now = time.time()
            if settled != last_settled:
                last_settled, last_change = settled, now
            if now > deadline:
                return f"the deadline of {deadline_s:.0f}s passed"
            if now - last_change > stall:
                return f"no invocation settled in {stall:.0f}s"
            if self._lab.cancelled.wait(_POLL / 2):
                raise LabCancelled("interrupted")
