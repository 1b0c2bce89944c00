"""A restart's down time stands for the retries it lets find the agent down, whoever is late.

A loaded machine makes either side late: restate-server fires its retry timers late (and an agent brought
back by the clock alone then meets a retry its down time was meant to turn away: one paid call more), or the
replacement agent gets the CPU late (and the server's retries meanwhile found nothing to serve them: one paid
call fewer). Here each side is stopped (SIGSTOP) right after the kill, for longer than the retries the row
counts on take; the counts must be the deck's all the same.
"""

from __future__ import annotations

import os
import resource
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest

from paidtwice.agent._go import Go, Lines, go_line, turn_away
from paidtwice.deck import CURVES, Deck, Experiment, FaultedRun, Landing
from paidtwice.deck._faults import KillInPause
from paidtwice.deck._policy import RetryPolicy, predict_paid_calls
from paidtwice.lab import Lab
from paidtwice.targets import AgentHost

FROZEN = 1.5
"""Seconds a process is stopped after the kill: longer than the rows' 0.6 s down time and their retries."""


@dataclass(frozen=True)
class KillInPauseThenFreeze(KillInPause):
    """A kill in the pause, then the process `frozen` names stopped for `FROZEN` seconds from it."""

    frozen: str = "server"
    """"server" (restate-server) or "agent" (the replacement agent)."""

    def land(self, run: FaultedRun) -> Landing:
        run.wait_for_pause()
        freeze: Callable[[], int | None] = (
            (lambda: run.engine.server.pid) if self.frozen == "server" else (lambda: _replacement(run))
        )
        pid = freeze()
        assert pid is not None
        kill_at = run.kill_agent()
        os.kill(pid, signal.SIGSTOP)
        # It thaws on its own time while the lab goes on bringing the agent back, as under load.
        thaw = threading.Timer(FROZEN - (time.time() - kill_at), os.kill, (pid, signal.SIGCONT))
        thaw.start()
        try:
            return run.agent_back(kill_at)
        finally:
            thaw.join()


def _replacement(run: FaultedRun) -> int | None:
    """The pid of the replacement loaded beside the serving agent."""
    assert isinstance(run.agent, AgentHost)
    pending = run.agent._pending  # noqa: SLF001 - the test stops the very process the kill releases
    return pending[0][0].pid if pending else None


def _policy_row(attempts: int) -> Experiment:
    curve = next(c for c in CURVES if c.name == "retry-policy-curve")
    return next(
        row
        for row, _ in curve.points()
        if isinstance(row.retry_policy, RetryPolicy) and row.retry_policy.max_attempts == attempts
    )


def test_late_retries_and_a_late_replacement_pay_what_the_row_does_on_time(lab: Lab) -> None:
    row = _policy_row(10)
    policy = row.retry_policy
    assert isinstance(policy, RetryPolicy) and row.restart_delay < FROZEN
    rows = [
        replace(row, name="frozen-server", fault=KillInPauseThenFreeze(frozen="server")),
        # Back at once: every retry reaches the agent, even the one that came while it was stopped.
        replace(row, name="frozen-agent", restart_delay=0.0, fault=KillInPauseThenFreeze(frozen="agent")),
    ]
    late_server, late_agent = Deck(lab).run_many([(r, None) for r in rows], concurrent=True)
    for record, delay in ((late_server, row.restart_delay), (late_agent, 0.0)):
        on_time = predict_paid_calls(policy.backoff(), delay)
        assert on_time.paid_calls is not None, f"{record.name}: the row's down time is between windows"
        assert record.attempts_while_down == on_time.fewest_down, record.name
        assert (record.status, record.attempts, record.model_calls) == (
            "paused",
            policy.max_attempts,
            on_time.paid_calls,
        ), record.name
    # The replacement served the retry that came while it was stopped: from the server's side it was up at
    # once, as the record says, and what it paid agrees with that down time.
    low, high = predict_paid_calls(policy.backoff(), late_agent.down_time or 0.0).range
    assert low <= late_agent.model_calls <= high


@pytest.mark.parametrize("high", [False, True], ids=["low-fd", "fd-past-1023"])
def test_a_prepared_agent_resets_connections_until_its_moment_and_count_have_come(high: bool) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    if high:
        # The listener keeps the number it had in the lab, which a lab with many connections puts past
        # select()'s 1023: the agent exited on "filedescriptor out of range in select()".
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < 2048 <= hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (2048, hard))
        moved = socket.socket(fileno=os.dup2(listener.fileno(), 1500))
        listener.close()
        listener = moved
    port = listener.getsockname()[1]
    read, write = os.pipe()
    served: list[float] = []
    try:
        os.write(write, f"{go_line(None, hold=True)}\n".encode())
        lines, go = Lines(read), Go()
        for words in lines.wait():
            go.read(words)
        waiter = threading.Thread(target=lambda: served.append(turn_away(listener, lines, go)), daemon=True)
        waiter.start()
        assert _reset_by(port), "held: a connection is reset"
        # Now, once two connections were reset: one more is.
        os.write(write, f"{go_line(None, refuse=2)}\n".encode())
        assert _reset_by(port)
        waiter.join(timeout=30.0)
        assert served and served[0] > 0
        with socket.create_connection(("127.0.0.1", port), timeout=5.0):
            pass  # queued for the agent that serves now
    finally:
        listener.close()
        os.close(read)
        os.close(write)


def _reset_by(port: int) -> bool:
    """Connect and wait for the peer to reset the connection (it may do so before connect returns)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5.0) as connection:
            return connection.recv(1) == b""
    except ConnectionResetError:
        return True
