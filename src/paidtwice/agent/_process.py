"""What every agent kind the lab kills shares (`LeasedAgent`, `wait_alive`), and what each attempt that
reached one did (`AgentAttempt`). The kinds: `paidtwice.targets.AgentHost` (an app served by
`paidtwice.agent.host`) and `CommandHost` (`_command`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from paidtwice._exceptions import PaidtwiceError, ServerStartError
from paidtwice.engine import (
    HOST,
    PortLease,
    Process,
    lease_port,
    load_timeout,
    too_slow,
    wait_for_load,
    wait_until,
)

__all__ = [
    "AGENT_PRELOAD",
    "AgentAttempt",
    "LeasedAgent",
    "attempt_of",
    "number_attempts",
    "wait_alive",
]

AGENT_PRELOAD = (
    "restate",
    "restate.server",
    "httpx",
    "httpcore",
    "httpx2",
    "httpcore2",
    "anyio",
    "anyio.lowlevel",
    "anyio._core._sockets",
    "anyio._core._streams",
    "anyio._core._tasks",
    "anyio._backends._asyncio",
    "sniffio",
    "encodings.idna",
    "concurrent.futures.thread",
    "hypercorn.asyncio",
    "hypercorn.config",
    "paidtwice.agent._app",
    "paidtwice.agent._wire",
    "aiohttp",
)
"""What `paidtwice.agent.host` and the deck's agent import, at start-up and lazily while serving (found by
logging, in a forked agent, every import it still made), for a fork server to import once. Not the host
module itself (it runs as `__main__`) and never an app (apps read their environment when imported).
aiohttp is imported by a host with a step log, to log the model requests made through it: a quarter of a
second of CPU each time, paid by a replacement agent inside the pause it must be killed in."""


@dataclass(frozen=True)
class AgentAttempt:
    """One attempt that reached the agent, as the host read it off the wire."""

    invocation_id: str
    """The invocation the attempt served."""
    at: float
    """Wall-clock time the attempt's StartMessage arrived."""
    pid: int
    """The agent process that served it."""
    retry: int
    """The server's count of attempts that failed since the invocation last made progress (0 on the first)."""
    progressed: bool
    """The attempt sent a new command (beyond the replayed journal): the server reset its count then."""
    error_code: int | None
    """The failure code the agent sent (570: journal mismatch); None if it ended otherwise or was killed."""
    ended: float | None = None
    """Wall-clock time the agent sent its last frame (an error, the end, a suspension); None if killed."""
    last_event: str | None = None
    """How it ended on the wire: "error", "end" (the handler returned) or "suspend"; None if cut off."""
    journal_waits: tuple[float, ...] = ()
    """Seconds from each `ctx.run` result the agent proposed to the next frame the server sent back (the
    result journaled): the journal round trips the handler waited on, in order."""
    model_requests: int = 0
    """Model requests its handler began (the host sees each one a handler makes)."""


def attempt_of(records: Sequence[dict[str, Any]], pid: int) -> AgentAttempt | None:
    """One attempt from the wire events logged for it (start, progress, error, end, suspend); None when its
    start was not logged."""
    start = next((r for r in records if r["event"] == "start"), None)
    if start is None:
        return None
    errors = [r["code"] for r in records if r["event"] == "error"]
    endings = [r for r in records if r["event"] in ("error", "end", "suspend")]
    proposed = [r["at"] for r in records if r["event"] == "propose"]
    acked = [r["at"] for r in records if r["event"] == "ack"]
    return AgentAttempt(
        invocation_id=start["invocation"],
        at=start["at"],
        pid=pid,
        retry=start["retry"],
        progressed=any(r["event"] == "progress" for r in records),
        error_code=errors[-1] if errors else None,
        ended=endings[-1]["at"] if endings else None,
        last_event=endings[-1]["event"] if endings else None,
        # A proposal the kill cut off before its answer has no ack: zip leaves it out.
        journal_waits=tuple(ack - sent for sent, ack in zip(proposed, acked, strict=False)),
        model_requests=sum(1 for r in records if r["event"] == "model"),
    )


def number_attempts(attempts: Sequence[AgentAttempt]) -> list[int]:
    """Each attempt's number among all the invocation's attempts, those that never reached the agent included.

    The count in an attempt's StartMessage restarts from 0 at the last attempt that made progress, so an
    attempt is that many attempts after it. A restarted server forgets the count (it is in memory), so an
    attempt is also at least one after the one before.
    """
    numbers: list[int] = []
    base = 1
    for attempt in attempts:
        number = max(base + attempt.retry, (numbers[-1] + 1) if numbers else 1)
        numbers.append(number)
        if attempt.progressed:
            base = number
    return numbers


def wait_alive(
    process: Process,
    ready: Callable[[], bool],
    *,
    exited: Callable[[], str],
    late: str | Callable[[], str],
    timeout: float | None = None,
    interval: float = 0.02,
    error: type[PaidtwiceError] = ServerStartError,
) -> None:
    """Block until `ready()` holds; `error(exited())` if the process exits first, an error saying `late`
    (or what it returns then: "... did not load the app"), the wait and how to lengthen it if it does not
    hold within `timeout`
    (None: `load_timeout()`). The one wait of every agent kind (loading, listening)."""
    timeout = load_timeout() if timeout is None else timeout

    def up() -> bool:
        if not process.alive():
            raise error(exited())
        return ready()

    pid = process.pid
    waited = (
        wait_for_load(up, pid, timeout=timeout, interval=interval)
        if pid is not None
        else (None if wait_until(up, timeout=timeout, interval=interval) else timeout)
    )
    if waited is not None:
        raise error(too_slow(late if isinstance(late, str) else late(), waited))


class LeasedAgent:
    """What every agent kind shares: a leased port the server reaches it on, a context manager that
    closes it. A kind implements `start`, `prepare`/`wait_ready` (load a replacement ahead), `kill`,
    `release(at)`/`wait_up` (listen again at `at`), `attempts` and `close`
    (`paidtwice.targets.Agent`)."""

    def __init__(self, *, env: Mapping[str, str], workdir: Path, cwd: Path | None) -> None:
        self.env = dict(env)
        """The environment every process of the agent is started with."""
        self.workdir = workdir
        """Directory for the agent's logs."""
        self.cwd = cwd
        """Directory the agent runs in."""
        self._lease: PortLease = lease_port()
        self.starts = 0
        """How many processes have been started."""

    @property
    def port(self) -> int:
        return self._lease.port

    @property
    def uri(self) -> str:
        return f"http://{HOST}:{self.port}"

    def release(self, at: float | None = None) -> None:
        raise NotImplementedError

    def wait_up(self) -> float:
        raise NotImplementedError

    def restart(self, at: float | None = None) -> float:
        """Listen again at wall-clock time `at` (else now); the time it listened."""
        self.release(at)
        return self.wait_up()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
