"""The services a swept handler calls (its callees) during a sweep: who serves them, and when a point's
replay waits on one that can no longer run.

The server sends a call to the deployment registered last for the service called, and a started call stays
with its deployment. A point's agent serves its own renamed service alone (`Launch.alone`): it is killed and,
when its point ends, closed, so a service it registered would leave every later call to it (another point's
handler calling a tool service of the app) retrying against a closed port, that point never settling. The
whole app is registered by the clean runs only, whose agents the sweep keeps up until its last point ends
(`Companions`). Should a callee still be unable to run (paused, or its deployment gone), the point ends at
once and says so (`CalleeWatch`), instead of waiting out its settle timeout.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence

from paidtwice._exceptions import PaidtwiceError
from paidtwice.engine import InvocationRow, port_is_listening
from paidtwice.targets import Agent

__all__ = ["CalleeWatch", "Companions", "failure_of", "unserved_call"]

_POLL = 2.0
"""Seconds between two looks at a point's callees (a query each)."""
_ADDRESS = re.compile(r"https?://[^/'\s]+:(\d+)")
"""A deployment's address in the server's failure message ("error when calling 'http://...:PORT/'")."""
_NOT_SERVED = re.compile(r"the service handler (\S+) was not found")
"""The server's failure of an attempt whose call goes to a handler no deployment serves (it retries it until
one is registered)."""


def failure_of(row: InvocationRow | None) -> str:
    """', the last attempt failed: MESSAGE' (its first line, cut short), when the server kept one."""
    message = (row.last_failure or "").strip() if row is not None else ""
    if not message:
        return ""
    line = message.splitlines()[0]
    return f", the last attempt failed: {line if len(line) <= 300 else line[:297] + '...'}"


def unserved_call(row: InvocationRow | None, name: str) -> str | None:
    """Why the clean run of `name` can never finish when its last attempt failed on a call to a handler no
    deployment on the lab's server serves (the server retries it until one is registered, which no sweep
    does), in one line; None otherwise."""
    found = _NOT_SERVED.search(row.last_failure or "") if row is not None else None
    if found is None:
        return None
    return (
        f"the clean run of {name} calls {found.group(1)}, which no deployment on the lab's server serves "
        "(the server retries such a call until one is registered): sweep an app that serves it too (--app "
        "MODULE:APP of an app with both, or --app MODULE of a module that imports the handler it calls)"
    )


class Companions:
    """The clean runs' agents that serve the app's other services while the sweep's points run; closed
    when the sweep ends."""

    def __init__(self) -> None:
        self._agents: list[tuple[float, frozenset[str], Agent]] = []
        self._lock = threading.Lock()

    def keep(self, agent: Agent, *, registered: float, services: frozenset[str]) -> None:
        """Keep `agent`, whose deployment of `services` was registered at `registered` (monotonic)."""
        with self._lock:
            self._agents.append((registered, services, agent))

    def prune(self) -> None:
        """Close every kept agent that is no longer the one registered last for any of its services (the
        clean runs are over: nothing of theirs is in flight, and new calls go to the latest)."""
        with self._lock:
            latest: dict[str, float] = {}
            for registered, services, _ in self._agents:
                for service in services:
                    latest[service] = max(latest.get(service, registered), registered)
            keep = [a for a in self._agents if any(latest[s] == a[0] for s in a[1])]
            gone = [a for a in self._agents if a not in keep]
            self._agents = keep
        for _, _, agent in gone:
            agent.close()

    def close(self) -> None:
        with self._lock:
            agents, self._agents = self._agents, []
        for _, _, agent in agents:
            agent.close()


class CalleeWatch:
    """Looks, every `_POLL` seconds, for a call a point's replay waits on that cannot run: the callee
    paused (its retries given up), or retrying, twice in a row, against a deployment address nothing
    listens on that is not the run's own agent (which listens again after its restart)."""

    def __init__(self, callees: Callable[[], Sequence[InvocationRow]], *, agent: str, calls: bool) -> None:
        self._callees = callees
        self._agent_port = agent.rstrip("/").rsplit(":", 1)[-1]
        self._calls = calls
        """Only a handler whose clean run made a call waits on one; no other point pays the query."""
        self._next = 0.0
        self._seen: set[str] = set()
        """Callees seen unreachable once: the second look decides."""
        self.why: str | None = None
        """Why the point's replay cannot settle, in words, once seen."""

    def stuck(self) -> bool:
        if self.why is not None:
            return True
        if not self._calls or time.monotonic() < self._next:
            return False
        self._next = time.monotonic() + _POLL
        try:
            callees = self._callees()
        except PaidtwiceError:
            return False
        for row in callees:
            why = self._why(row)
            if why is not None:
                self.why = f"the call to {row.target} ({row.id}) it waits on {why}"
                return True
        return False

    def _why(self, row: InvocationRow) -> str | None:
        failure = next(iter((row.last_failure or "").strip().splitlines()), "")[:300]
        if row.status == "paused":
            return "is paused (its retries given up)" + (f": {failure}" if failure else "")
        if row.status != "backing-off":
            return None
        ports = [port for port in _ADDRESS.findall(failure) if port != self._agent_port]
        if not ports or any(port_is_listening(int(port)) for port in ports):
            self._seen.discard(row.id)
            return None
        if row.id not in self._seen:
            self._seen.add(row.id)
            return None
        return f"cannot run, nothing serves it any more: {failure}"
