"""The watch itself: snapshots at an interval, with what follows each one (metrics, the pause hook, the file).

`Watch.step()` takes one snapshot and does what follows it; the CLI calls it once (`--once`) or at every
interval, and prints. Nothing here changes an invocation: changing one is `recover --apply`'s job.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

from paidtwice.results import RecordSink, StuckInvocation, WatchSnapshot, record_json, to_jsonable
from paidtwice.watch._metrics import MetricsServer
from paidtwice.watch._scan import Scanner

__all__ = ["HOOK_TIMEOUT", "Watch", "snapshot_json"]

HOOK_TIMEOUT = 60.0
"""Seconds an --on-pause command may take before it is stopped; the watch waits for it, so that two hooks
never run at once and a slow webhook cannot pile up processes."""


def snapshot_json(snapshot: WatchSnapshot) -> str:
    """The snapshot as a results record (`paidtwice report` reads it back)."""
    return json.dumps(record_json(snapshot), indent=2)


def invocation_json(stuck: StuckInvocation) -> str:
    return json.dumps(to_jsonable(stuck))


@dataclass
class Watch:
    """Snapshots of one server and what follows each."""

    scanner: Scanner
    """Reads the server."""
    metrics: MetricsServer | None = None
    """Serves the latest snapshot to Prometheus."""
    on_pause: str | None = None
    """A shell command run once for each invocation seen to become paused, its record on stdin."""
    records: RecordSink | None = None
    """Where each snapshot is written (the file's one record, replaced whole)."""
    warn: Callable[[str], None] = print
    """Where a failed hook is reported (one line)."""
    _status: dict[str, str] = field(default_factory=dict)
    _hooked: set[str] = field(default_factory=set)
    _snapshots: int = 0

    def step(self) -> WatchSnapshot:
        try:
            snapshot = self.scanner.snapshot()
        except BaseException:
            if self.metrics is not None:
                self.metrics.failed()
            raise
        became = self._became_paused(snapshot)
        if self.metrics is not None:
            self.metrics.update(snapshot, became_paused=[(s.service, s.handler) for s in became])
        for stuck in became:
            self._run_hook(stuck)
        if self.records is not None:
            self.records.one(snapshot)
        return snapshot

    def _became_paused(self, snapshot: WatchSnapshot) -> list[StuckInvocation]:
        """Invocations paused now that this watch saw in another state before (retrying, or not listed at
        all once it had started). Those already paused at the first snapshot paused before the watch did."""
        first = self._snapshots == 0
        became = []
        for stuck in snapshot.stuck:
            before = self._status.get(stuck.invocation_id)
            if stuck.status == "paused" and stuck.invocation_id not in self._hooked:
                if not first and before != "paused":
                    became.append(stuck)
                self._hooked.add(stuck.invocation_id)
        self._status = {s.invocation_id: s.status for s in snapshot.stuck}
        self._snapshots += 1
        return became

    def _run_hook(self, stuck: StuckInvocation) -> None:
        if self.on_pause is None:
            return
        try:
            done = subprocess.run(
                self.on_pause,
                shell=True,
                input=invocation_json(stuck),
                text=True,
                capture_output=True,
                timeout=HOOK_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            self.warn(f"--on-pause for {stuck.invocation_id} took longer than {HOOK_TIMEOUT:.0f}s; stopped")
            return
        if done.returncode != 0:
            said = (done.stderr.strip().splitlines() or [""])[-1]
            self.warn(f"--on-pause for {stuck.invocation_id} exited {done.returncode}: {said}")
