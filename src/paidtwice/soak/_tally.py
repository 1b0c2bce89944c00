"""The soak's last phase: what it measured, read once from the server's final state (one query for every
invocation's status and times) and from the stub's ledger (indexed by lane and invocation).

The kills' cost is the ledger's model calls less the clean count per invocation, measured on the clean
invocation before the soak; an invocation that did not complete owes none of the calls it never made.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

from paidtwice.agent import AgentAttempt
from paidtwice.engine import SqlClient, epoch
from paidtwice.lab import PRICES_AS_OF, Lab, bill, extra_calls
from paidtwice.results import KillSnapshot, NodeKillLine, PeakMemory, SoakRecord
from paidtwice.soak._bound import snapshot
from paidtwice.soak._drive import Driven
from paidtwice.soak._monitor import SETTLED
from paidtwice.soak._node_kills import node_kill_lines
from paidtwice.soak._setup import Clean
from paidtwice.stub import Lane

__all__ = ["Ended", "tally"]


@dataclass(frozen=True)
class Ended:
    """How the soak's drive and wait ended."""

    started: float
    """When the first invocation was sent."""
    wall: float
    """Seconds from then until every invocation settled, or the soak gave up (as the monitor saw it)."""
    gave_up: str | None
    """Why it stopped waiting before every invocation settled ("interrupted" too); None when none did."""
    interrupted: bool
    """Ctrl-C or SIGTERM stopped it: the node kills it did are not accounted."""
    attempts: list[AgentAttempt]
    """The attempts that reached the agent, read once the soak ended (settled or interrupted) after any kill;
    else []."""


def tally(
    lab: Lab,
    clean: Clean,
    driven: Driven,
    ended: Ended,
    memory: PeakMemory,
    *,
    lane: Lane,
    waves: tuple[int, ...],
    app: str,
) -> SoakRecord:
    """What the soak measured; `app` labels a user's app ("" for the deck's agent)."""
    ids = driven.ids
    rows = _final_rows(lab.sql, clean.calling.service)
    mine = [rows[i] for i in ids if i in rows]
    completed = sum(1 for row in mine if row.status == "completed" and row.result == "success")
    paused = sum(1 for row in mine if row.status == "paused")
    unfinished = sum(1 for row in mine if row.status not in SETTLED)
    durations = sorted(row.completed - row.created for row in mine if row.completed and row.created)
    wall = ended.wall
    if not ended.gave_up and len(durations) == len(ids):
        # To the last completion as the server timed it, not to the poll that saw it.
        wall = max(row.completed or 0.0 for row in mine) - ended.started
    all_calls = [c for i in ids for c in lane.model_calls(i)]
    # Counted now, when every request the killed processes sent has reached the stub.
    every_call = lane.model_calls()
    snapshots = [snapshot(every_call, kill, ended.attempts, by_order=clean.by_order) for kill in driven.kills]
    paid = bill(all_calls, lab.price_model)
    tool_runs = [len(lane.tool_runs(i)) for i in ids] if clean.counts_tools else []
    return SoakRecord(
        app=app,
        node_kills=_node_lines(lab, clean, driven, ended, lane, rows),
        waves=waves,
        sent=len(ids),
        kills=len(driven.kills),
        completed=completed,
        paused=paused,
        lost=len(ids) - completed - paused - unfinished,
        unfinished=unfinished,
        gave_up=ended.gave_up if unfinished else None,
        clean_model_calls=clean.model_calls,
        clean_tool_runs=clean.tool_runs,
        model_steps=tuple(sorted(clean.model_steps)),
        model_calls=len(all_calls),
        extra_model_calls=_extra_model_calls(lane, ids, rows, clean.model_calls),
        kill_snapshots=tuple(_with_running(taken, mine) for taken in snapshots),
        extra_tool_runs=sum(count - clean.tool_runs for count in tool_runs if count > clean.tool_runs),
        wall_time=round(wall, 3),
        throughput=round(completed / wall, 2) if wall > 0 else 0.0,
        p50_completion=_percentile(durations, 0.50),
        p99_completion=_percentile(durations, 0.99),
        peak_memory=memory,
        usage=paid.usage,
        cost_usd=paid.cost_usd,
        extra_cost_usd=bill(extra_calls(all_calls), lab.price_model).cost_usd,
        price_model=lab.price_model,
        prices_as_of=PRICES_AS_OF,
    )


def _extra_model_calls(lane: Lane, ids: list[str], rows: dict[str, _Final], clean_calls: int) -> int:
    """Model calls beyond the clean count per invocation. An invocation that did not complete (failed,
    paused, unfinished, vanished) may not have made all its calls: it owes none of those it never made."""
    per_invocation = {i: len(lane.model_calls(i)) for i in ids}
    short = {i for i in ids if i not in rows or rows[i].status != "completed" or rows[i].result != "success"}
    return sum(
        max(0, made - clean_calls) if i in short else made - clean_calls for i, made in per_invocation.items()
    )


def _with_running(taken: KillSnapshot, mine: list[_Final]) -> KillSnapshot:
    """The snapshot with the invocations created before its kill and not settled at it."""
    running = sum(
        1 for row in mine if (row.created or float("inf")) <= taken.at < (row.completed or float("inf"))
    )
    return replace(taken, running=running)


def _node_lines(
    lab: Lab, clean: Clean, driven: Driven, ended: Ended, lane: Lane, rows: dict[str, _Final]
) -> tuple[NodeKillLine, ...]:
    """Each node kill's line; none when there were none, or when the soak was interrupted."""
    if ended.interrupted or not driven.node_events:
        return ()
    created = {i: rows[i].created for i in driven.ids if i in rows}
    events = driven.node_events
    return node_kill_lines(lab.sql, driven.ids, created, lane, ended.attempts, events, clean.model_steps)


@dataclass(frozen=True)
class _Final:
    """One invocation's row in sys_invocation at the end."""

    status: str
    """Its status."""
    result: str
    """"success" or "failure" once completed, else ""."""
    created: float | None
    """When the server created it (epoch seconds)."""
    completed: float | None
    """When it completed, if it did."""


def _final_rows(sql: SqlClient, service: str) -> dict[str, _Final]:
    """Every invocation of the service, in one query."""
    rows = sql.query(
        "SELECT id, status, completion_result, created_at, completed_at FROM sys_invocation "
        f"WHERE target_service_name = '{service}'"
    )
    return {
        str(row["id"]): _Final(
            status=str(row.get("status", "")),
            result=str(row.get("completion_result") or ""),
            created=epoch(row.get("created_at")),
            completed=epoch(row.get("completed_at")),
        )
        for row in rows
    }


def _percentile(sorted_values: list[float], fraction: float) -> float | None:
    if not sorted_values:
        return None
    if len(sorted_values) == 1:
        return round(sorted_values[0], 3)
    cuts = statistics.quantiles(sorted_values, n=100, method="inclusive")
    return round(sorted_values[-1] if fraction >= 1 else cuts[round(fraction * 100) - 1], 3)
