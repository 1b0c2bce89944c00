"""Load with faults: many journaled invocations at once, the agent killed and restarted while they run.

Nothing may be lost, and journaling bounds what the kills cost: a model call is paid again only if it was in
flight at a kill (its answer never reached the journal), so the extra calls are at most the calls in flight
at the kills, counted from the stub's ledger at each kill.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from paidtwice._exceptions import ExperimentError
from paidtwice.engine._sql import SqlClient
from paidtwice.lab._bill import PRICES_AS_OF, bill, extra_calls
from paidtwice.lab._runner import QUESTION, Lab, LabCancelled, _epoch
from paidtwice.stub._scripts import SCRIPTS
from paidtwice.stub._server import Lane
from paidtwice.stub._usage import NO_TOKENS, TokenUsage

__all__ = ["SoakRecord", "soak"]

_CLEAN_MODEL_CALLS = 2
"""Model calls of one clean run of the deck's agent."""


@dataclass(frozen=True)
class SoakRecord:
    """What a soak measured."""

    sent: int
    """Invocations sent."""
    kills: int
    """Times the agent was killed and restarted."""
    completed: int
    """Invocations that completed."""
    paused: int
    """Invocations that ended paused."""
    lost: int
    """Invocations neither completed nor paused when the wait ended (must be 0)."""
    model_calls: int
    """Model calls in all."""
    extra_model_calls: int
    """Model calls beyond the clean count (2 per invocation)."""
    in_flight_at_kills: int
    """Model calls cut off by the kills, summed (made, but their answer not journaled): the most the kills
    can cost."""
    extra_tool_runs: int
    """Tool executions beyond one per invocation."""
    wall_time: float
    """Seconds from the first send until every invocation settled."""
    throughput: float
    """Completed invocations per second."""
    usage: TokenUsage = NO_TOKENS
    """Tokens billed for every model call of the soak."""
    cost_usd: float = 0.0
    """Their price in dollars, at `price_model`."""
    extra_cost_usd: float = 0.0
    """The price of the calls the kills added (all but the first delivered answer of each turn of each
    invocation)."""
    price_model: str = ""
    """The model whose prices the dollars are at."""
    prices_as_of: str = ""
    """The price data's date."""

    @property
    def ok(self) -> bool:
        return self.lost == 0 and self.extra_model_calls <= self.in_flight_at_kills


def _model_calls_cut_off(sql: SqlClient, ids: list[str], lane: Lane, *, since: float) -> int:
    """Model calls the agent made in its last life (from `since`) whose answer never reached the journal.

    Read at the end of the down time, when nothing new can be journaled for the dead agent and no new agent
    listens yet: every call the stub has recorded since `since` was made by the dead agent, also one the stub
    read only after the kill (the agent sent it just before). Each such call was paid for and will be paid
    again on replay; a step whose command is journaled but whose HTTP call had not gone out yet costs
    nothing, so the journal alone would overcount.
    """
    results: dict[str, int] = {}
    for chunk in range(0, len(ids), 100):
        quoted = ", ".join(f"'{i}'" for i in ids[chunk : chunk + 100])
        rows = sql.query(
            "SELECT id, index, entry_type, name, appended_at FROM sys_journal "
            f"WHERE id IN ({quoted}) ORDER BY id, index"
        )
        open_steps: dict[str, list[str]] = {}
        for row in rows:
            invocation = str(row["id"])
            steps = open_steps.setdefault(invocation, [])
            if row["entry_type"] == "Command: Run":
                steps.append(str(row.get("name") or ""))
            elif row["entry_type"] == "Notification: Run" and steps:
                step = steps.pop(0)
                if step == "model" and (_epoch(row.get("appended_at")) or 0.0) >= since:
                    results[invocation] = results.get(invocation, 0) + 1
    calls: dict[str, int] = {}
    for call in lane.model_calls():
        if since <= call.started:
            calls[call.invocation_id] = calls.get(call.invocation_id, 0) + 1
    return sum(max(0, count - results.get(invocation, 0)) for invocation, count in calls.items())


def soak(
    lab: Lab,
    *,
    invocations: int = 200,
    kills: int = 5,
    kill_every: float = 0.7,
    restart_delay: float = 0.3,
    timeout: float = 300.0,
) -> SoakRecord:
    """Send `invocations` at once to one journaled agent and kill it `kills` times while they run."""
    if invocations < 1 or kills < 0:
        raise ExperimentError("a soak needs at least one invocation and a non-negative number of kills")
    service = f"Agent_soak_{lab._next_id()}"
    lane = lab.stub.open_lane(SCRIPTS["steady"], name=service.lower())
    admin, ingress, sql = lab.admin, lab.ingress, lab.sql
    with lab.new_agent(mode="journaled", lane=lane, service=service) as agent:
        agent.start()
        admin.register_deployment(agent.uri)
        started = time.time()
        with ThreadPoolExecutor(max_workers=8) as pool:
            ids = list(pool.map(lambda _: ingress.send(service, "run", QUESTION), range(invocations)))
        in_flight = 0
        alive_since = started
        for _ in range(kills):
            agent.prepare()
            agent.wait_ready()
            if lab.cancelled.wait(kill_every):
                raise LabCancelled("interrupted")
            agent.kill()
            if lab.cancelled.wait(restart_delay):
                raise LabCancelled("interrupted")
            # Read at the end of the down time: what the agent sent just before dying is in by now.
            in_flight += _model_calls_cut_off(sql, ids, lane, since=alive_since)
            alive_since = agent.go()
        deadline = time.monotonic() + timeout
        statuses: dict[str, str] = {}
        while True:
            pending = [i for i in ids if statuses.get(i) not in ("completed", "paused")]
            for chunk in range(0, len(pending), 100):
                rows = sql.invocations(pending[chunk : chunk + 100])
                statuses.update({i: row.status for i, row in rows.items()})
            if all(statuses.get(i) in ("completed", "paused") for i in ids):
                break
            if time.monotonic() > deadline or lab.cancelled.is_set():
                break
            time.sleep(0.2)
        wall = time.time() - started
    completed = sum(1 for i in ids if statuses.get(i) == "completed")
    paused = sum(1 for i in ids if statuses.get(i) == "paused")
    calls = lane.model_calls()
    runs = lane.tool_runs()
    paid = bill(calls, lab.price_model)
    per_invocation: dict[str, int] = {}
    for run in runs:
        per_invocation[run.invocation_id] = per_invocation.get(run.invocation_id, 0) + 1
    return SoakRecord(
        sent=len(ids),
        kills=kills,
        completed=completed,
        paused=paused,
        lost=len(ids) - completed - paused,
        model_calls=len(calls),
        extra_model_calls=len(calls) - _CLEAN_MODEL_CALLS * len(ids),
        in_flight_at_kills=in_flight,
        extra_tool_runs=sum(count - 1 for count in per_invocation.values() if count > 1),
        wall_time=round(wall, 3),
        throughput=round(completed / wall, 2) if wall > 0 else 0.0,
        usage=paid.usage,
        cost_usd=paid.cost_usd,
        extra_cost_usd=bill(extra_calls(calls), lab.price_model).cost_usd,
        price_model=lab.price_model,
        prices_as_of=PRICES_AS_OF,
    )
