"""A run's record: what the lab saw of one run (`RunSeen`), read with the server's tables and the stub's
ledgers into the `RunRecord` the deck's figures are checked on."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from paidtwice._exceptions import UsageError
from paidtwice.agent import AgentAttempt
from paidtwice.deck._checks import compare
from paidtwice.deck._experiments import Experiment
from paidtwice.deck._measures import (
    Recovery,
    deliberate_wait,
    mismatch_of,
    recovery_of,
)
from paidtwice.engine import (
    AdminClient,
    IngressClient,
    InvocationRow,
    JournalEntry,
    SqlClient,
    invocation_status,
)
from paidtwice.lab import (
    PRICES_AS_OF,
    PolledAttempts,
    attempt_log_of,
    bill,
    extra_calls,
    mismatches_of,
    model_log_of,
    tool_log_of,
)
from paidtwice.recover import plan_recovery
from paidtwice.results import NodeKillRecord, RecordedStatus, RunRecord
from paidtwice.stub import Booking, Lane, ModelCall

__all__ = ["SOURCES", "RunSeen", "measure_run"]

SOURCES = {
    "model_calls": "stub ledger, the run's lane and invocation",
    "tool_calls": "stub tool ledger, same lane and invocation",
    "status": "sys_invocation.status",
    "journal": "sys_journal",
    "attempts": "the agent host's wire log: each attempt that reached the agent, numbered by the retry count "
    "in its StartMessage (attempts failed since the last progress, refused connections included); "
    "sys_invocation polled every 20 ms as a floor",
    "attempts_reached_agent": "agent host's wire log, attempts started after the kill",
    "attempt_log": "agent host's wire log; the numbers it skips are attempts that found the agent down",
    "attempts_while_down": "attempts minus those in the agent host's wire log",
    "mismatches": "agent host's wire log: attempts whose ErrorMessage carried code 570 (RT0016)",
    "protocol_version": "sys_invocation.pinned_service_protocol_version",
    "recovery_s": "from the agent listening again (the lab) to the output's append (sys_journal)",
    "recovery_breakdown": "regain_s: the agent host's step log (the context operation the kill interrupted, "
    "called again); model waits: stub ledger; journal round trips: agent host's wire log",
}
"""Where each figure of a run record is read from (the record's `sources`)."""


@dataclass(frozen=True)
class RunSeen:
    """What the lab saw of one run, once its invocation settled: where to read the rest."""

    service: str
    """The service name the run's agent registered."""
    delay: float
    """Seconds the agent was meant to stay down after the kill."""
    invocation_id: str
    """The run's invocation."""
    lane: Lane
    """The stub lane its agent talked to (the model, tool and booking ledgers)."""
    polled: PolledAttempts
    """The invocation's attempts, as the lab's poller saw them."""
    final: InvocationRow | None
    """Its sys_invocation row once settled (None: the server held none)."""
    agent_attempts: list[AgentAttempt]
    """The attempts that reached the agent (its host's wire log)."""
    kill_at: float | None
    """When the kill landed (wall clock; None: no kill)."""
    up_at: float | None
    """When the agent listened again after it."""
    started: float
    """When the run started (wall clock)."""
    admin: AdminClient
    """The admin client the run registered its agent with (its log of requests)."""
    step_log: Path
    """The host's step log of the run's handler."""
    node_kill: NodeKillRecord | None = None
    """For a run that killed a cluster node: what that cost."""


def measure_run(
    sql: SqlClient,
    ingress: IngressClient,
    experiment: Experiment,
    seen: RunSeen,
    *,
    price_model: str,
    server_version: str,
) -> RunRecord:
    """The run's record, checked against the deck's figures for its row."""
    invocation_id, started, kill_at, up_at = seen.invocation_id, seen.started, seen.kill_at, seen.up_at
    journal = tuple(sql.journal(invocation_id))
    status = invocation_status(seen.final.status) if seen.final is not None else "unknown"
    calls = seen.lane.model_calls(invocation_id)
    tools = seen.lane.tool_runs(invocation_id)
    bookings = seen.lane.bookings(invocation_id)
    agent_attempts = seen.agent_attempts
    total = seen.polled.count(agent_attempts)
    after_kill = [a for a in agent_attempts if kill_at is not None and a.at > kill_at]
    paid, added = bill(calls, price_model), bill(extra_calls(calls), price_model)
    recovery, deliberate = _timing(experiment, seen, journal, status, calls, bookings)
    record = RunRecord(
        name=experiment.name,
        mode=experiment.mode,
        stub=experiment.script,
        fault=experiment.fault.describe(),
        restart_delay=seen.delay,
        status=status,
        invocation_id=invocation_id,
        service=seen.service,
        lane=seen.lane.name,
        model_calls=len(calls),
        tool_calls=len(tools),
        answer=_answer(ingress, invocation_id, status),
        journal=journal,
        model_log=model_log_of(calls, started, price_model=price_model),
        tool_log=tool_log_of(tools, started),
        attempt_log=attempt_log_of(agent_attempts, total, status, started),
        attempts=total,
        attempts_reached_agent=len(after_kill),
        attempts_while_down=total - len(agent_attempts),
        mismatches=mismatches_of(agent_attempts),
        sources=SOURCES,
        down_time=(up_at - kill_at) if kill_at is not None and up_at is not None else None,
        mismatch=mismatch_of(sql.failures(invocation_id), journal),
        expected=experiment.expected,
        checks=(),
        matches=False,
        wall_time=round(time.time() - started, 3),
        deliberate_wait=round(deliberate, 3),
        server_version=server_version,
        admin_log=tuple(seen.admin.log),
        started_at=started,
        killed_at=round(kill_at - started, 3) if kill_at is not None else None,
        usage=paid.usage,
        cost_usd=paid.cost_usd,
        extra_usage=added.usage,
        extra_cost_usd=added.cost_usd,
        price_model=price_model,
        prices_as_of=PRICES_AS_OF,
        model_latency=experiment.model_latency,
        recovery_s=recovery.recovery_s,
        retry_wait_s=recovery.retry_wait_s,
        recovery_breakdown=recovery.breakdown,
        bookings=len(bookings),
        booking_effects=sum(1 for b in bookings if b.effect),
        idempotency_key=experiment.booking_key,
        node_kill=seen.node_kill,
        explicit_recovery=experiment.explicit_recovery,
        retry_policy=experiment.retry_policy.describe() if experiment.retry_policy else "",
        server_flags=tuple(f"{name}={value}" for name, value in experiment.server_flags),
        completion_result=seen.final.completion_result if seen.final is not None else None,
        protocol_version=sql.protocol_version(invocation_id),
        recover_offers=_recover_offers(sql, invocation_id) if experiment.plans_recovery else (),
    )
    checks = compare(experiment.expected, record)
    return replace(record, checks=checks, matches=all(c.ok for c in checks))


def _timing(
    experiment: Experiment,
    seen: RunSeen,
    journal: tuple[JournalEntry, ...],
    status: RecordedStatus,
    calls: list[ModelCall],
    bookings: list[Booking],
) -> tuple[Recovery, float]:
    """The run's recovery, and the seconds of it that were waits the experiment asks for."""
    recovery = recovery_of(
        journal,
        status,
        kill_at=seen.kill_at,
        up_at=seen.up_at,
        calls=calls,
        agent=seen.agent_attempts,
        step_log=seen.step_log,
        invocation_id=seen.invocation_id,
    )
    # A slow model's answers and a booking's confirmation are waits the row asks for.
    waits = [(c.started, c.finished) for c in calls if experiment.model_latency and c.finished]
    waits += [(b.started, b.finished) for b in bookings if b.finished]
    deliberate = deliberate_wait(
        journal,
        seen.polled.ordered(),
        seen.agent_attempts,
        seen.kill_at,
        seen.up_at,
        calls,
        seen.started,
        waits=waits,
    )
    return recovery, deliberate


def _recover_offers(sql: SqlClient, invocation_id: str) -> tuple[str, ...]:
    """What `recover` offers for the run's invocation, if it is stuck (it refuses a finished one)."""
    try:
        plan = plan_recovery(sql, invocation_id)
    except UsageError:
        return ()
    return tuple(f"{way.name}: {way.replay}" for way in plan.ways)


def _answer(ingress: IngressClient, invocation_id: str, status: str) -> str | None:
    """The completed invocation's output, as the ingress returns it to a caller attaching to it."""
    if status != "completed":
        return None
    response = ingress.attach(invocation_id, timeout=30.0)
    return str(response.json()) if response.status_code == 200 else None
