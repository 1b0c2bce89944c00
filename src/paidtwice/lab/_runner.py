"""Run experiments on a real Restate server, a real agent process and the stub model.

A `Lab` owns one restate-server, one stub and one fork server for any number of runs; each run gets its own
agent process (forked with its imports done), port, stub lane, service name and invocation, so runs can go
concurrently without sharing a count. A run: start the agent and register it; wait until no other run is
starting; send the invocation; wait for the moment the fault names, confirmed from the journal or the
stub's ledger; load the replacement; SIGKILL the agent's process group; keep it down for the restart delay;
open the replacement's port; wait until the invocation completes or pauses; measure.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from types import TracebackType

from paidtwice._exceptions import ExperimentError, LabCancelled
from paidtwice._pins import RESTATE_SERVER_VERSION
from paidtwice.agent._env import EXPLICIT_RECOVERY, PAUSE_S, RETRY_POLICY, STEP_LOG, agent_env
from paidtwice.agent._process import AGENT_PRELOAD, AgentAttempt, AgentHost
from paidtwice.engine._admin import AdminClient
from paidtwice.engine._cluster import RestateCluster, check_size
from paidtwice.engine._forkserver import ForkServer
from paidtwice.engine._ingress import IngressClient
from paidtwice.engine._janitor import forget, remove_at_exit
from paidtwice.engine._server import RestateServer
from paidtwice.engine._sql import InvocationRow, SqlClient, invocation_status
from paidtwice.lab._bill import (
    DEFAULT_PRICE_MODEL,
    PRICES_AS_OF,
    bill,
    check_price_model,
    extra_calls,
)
from paidtwice.lab._checks import compare
from paidtwice.lab._experiments import AgentMode, Comparison, Curve, Experiment, Fault
from paidtwice.lab._measures import MISMATCH_CODE as MISMATCH_CODE
from paidtwice.lab._measures import (
    NodeKill,
    deliberate_wait,
    mismatch_of,
    node_kill_record,
    recovery_check,
    recovery_of,
)
from paidtwice.lab._measures import attempt_log_of as attempt_log_of
from paidtwice.lab._measures import model_log_of as model_log_of
from paidtwice.lab._measures import tool_log_of as tool_log_of
from paidtwice.lab._policy import Backoff, predict_paid_calls
from paidtwice.lab._watch import AttemptWatch, Watcher, mismatches_of, settled, wait_for
from paidtwice.results import (
    Check,
    ComparisonRecord,
    CurvePoint,
    CurveRecord,
    NodeKillRecord,
    RunRecord,
)
from paidtwice.stub._ledger import Booking, ModelCall
from paidtwice.stub._scripts import script_by_name
from paidtwice.stub._server import Lane, StubModel

__all__ = ["Lab"]

QUESTION = "What should I wear in Paris today?"
DECK_AGENT = "paidtwice.agent.weather:app"


def renamed_service(service: str, tag: str) -> str:
    """The name a service is registered under for one run of the lab (`SERVICE_TAG`), so that many copies
    of one app live on one server; anything but letters, digits and '_' becomes '_'."""
    return f"{re.sub(r'[^A-Za-z0-9_]', '_', service)}_{re.sub(r'[^A-Za-z0-9]', '_', tag)}"


_RUN_TIMEOUT = 180.0
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
_CLUSTER_PAUSE_S = "4"
"""The deck agent's pause on a cluster. A kill must land inside the pause, and on a cluster every SQL read
fans out over the nodes: with every deck row starting at once, a kill missed a 2 s pause here. No count the
deck reports depends on the pause's length."""


@dataclass(frozen=True)
class _Engine:
    """The server (or cluster) a run talks to, and the watcher polling it."""

    server: RestateServer | RestateCluster
    watcher: Watcher

    @property
    def admin(self) -> AdminClient:
        return AdminClient(self.server.admin_url)

    @property
    def sql(self) -> SqlClient:
        return _sql_of(self.server)

    @property
    def ingress(self) -> IngressClient:
        return IngressClient(self.server.ingress_url)


def _sql_of(server: RestateServer | RestateCluster) -> SqlClient:
    """A SQL client for the server; on a cluster, one that asks a live node and rides out a failover."""
    return server.sql() if isinstance(server, RestateCluster) else SqlClient(server.admin_url)


class Lab:
    """One restate-server (or a cluster of `cluster` nodes) and one stub, shared by every run made through it.

    Use as a context manager; every process it starts is killed on exit, also on Ctrl-C or failure.
    """

    def __init__(
        self,
        *,
        server_version: str = RESTATE_SERVER_VERSION,
        workdir: Path | None = None,
        echo: Callable[[str], None] = print,
        server: RestateServer | RestateCluster | None = None,
        stub: StubModel | None = None,
        price_model: str = DEFAULT_PRICE_MODEL,
        cluster: int = 1,
    ) -> None:
        self.price_model = check_price_model(price_model)
        """The model whose prices every record's dollars are at (checked before anything starts)."""
        if cluster != 1:
            check_size(cluster)
        self.server_version = server_version
        self.cluster = len(server.nodes) if isinstance(server, RestateCluster) else cluster
        """Nodes of the lab's Restate: 1 is a single restate-server, 3 or more a cluster."""
        self.agent_pause: str | None = os.environ.get(PAUSE_S) or (
            _CLUSTER_PAUSE_S if self.cluster > 1 else None
        )
        """The deck agent's durable pause (PAIDTWICE_PAUSE_S), when the lab sets it; else the agent's own."""
        self._own_workdir = workdir is None
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="paidtwice-lab-"))
        """Agent logs and attempt logs of every run."""
        if self._own_workdir:
            remove_at_exit(self.workdir)
        self.echo = echo
        self._server = server
        self._own_server = server is None
        self._stub = stub
        self._own_stub = stub is None
        self._ids = itertools.count(1)
        self._ids_lock = threading.Lock()
        self.cancelled = threading.Event()
        """Set on Ctrl-C: every wait in a run checks it and gives up."""
        self._watcher: Watcher | None = None
        self._forkserver: ForkServer | None = None
        self._starting = 0
        self._started = threading.Condition()

    # -- lifecycle -----------------------------------------------------------------------------------

    @property
    def server(self) -> RestateServer | RestateCluster:
        if self._server is None:
            raise RuntimeError("the lab is not started")
        return self._server

    @property
    def stub(self) -> StubModel:
        if self._stub is None:
            raise RuntimeError("the lab is not started")
        return self._stub

    @property
    def forkserver(self) -> ForkServer:
        """Forks every agent process of the lab, its imports done once."""
        if self._forkserver is None:
            raise RuntimeError("the lab is not started")
        return self._forkserver

    @property
    def admin(self) -> AdminClient:
        return AdminClient(self.server.admin_url)

    @property
    def sql(self) -> SqlClient:
        return _sql_of(self.server)

    @property
    def ingress(self) -> IngressClient:
        return IngressClient(self.server.ingress_url)

    def __enter__(self) -> Lab:
        try:
            # Started first: it imports while the server starts. Started from this thread, which outlives
            # every run: a child's parent-death signal follows the thread that started it.
            self._forkserver = ForkServer(
                preload=AGENT_PRELOAD, log_path=self.workdir / "forkserver.log"
            ).start()
            if self._server is None:
                self._server = self._new_server(self.cluster).start()
            if self._stub is None:
                self._stub = StubModel().start()
            self._forkserver.wait_ready()
            self._watcher = Watcher(lambda: self.sql, self.cancelled)
        except BaseException:
            self.close()
            raise
        return self

    def _new_server(self, nodes: int, flags: dict[str, str] | None = None) -> RestateServer | RestateCluster:
        if nodes == 1:
            return RestateServer(version=self.server_version, echo=self.echo, extra_env=flags)
        return RestateCluster(nodes=nodes, version=self.server_version, echo=self.echo, extra_env=flags)

    def close(self) -> None:
        self.cancelled.set()
        if self._watcher is not None:
            self._watcher.stop()
        try:
            if self._forkserver is not None:
                self._forkserver.close()
            if self._own_stub and self._stub is not None:
                self._stub.stop()
        finally:
            if self._own_server and self._server is not None:
                self._server.stop()
            if self._own_workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)
                forget(self.workdir)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- waiting -------------------------------------------------------------------------------------

    def _wait(self, what: str, condition: Callable[[], bool], *, timeout: float) -> None:
        wait_for(what, condition, timeout=timeout, stop=self.cancelled.is_set)

    @contextlib.contextmanager
    def _starting_up(self) -> Iterator[None]:
        """A run's start-up: its agent processes load (the costly part, in CPU) and register."""
        with self._started:
            self._starting += 1
        try:
            yield
        finally:
            with self._started:
                self._starting -= 1
                self._started.notify_all()

    def _wait_started(self) -> None:
        """Wait until no run of the lab is starting up, so that no kill and no retry lands while agent
        processes compete for the CPU with the server: on a small machine that delays the server's retries by
        a tenth of a second, enough to move a retry across the agent's restart."""
        deadline = time.monotonic() + 120.0
        with self._started:
            while self._starting and not self.cancelled.is_set() and time.monotonic() < deadline:
                self._started.wait(0.1)
        if self.cancelled.is_set():
            raise LabCancelled("interrupted while runs were starting")

    def _prepare_replacement(self, agent: AgentHost) -> None:
        """Load the agent's replacement (it opens its port only when told), then wait until no run of the
        lab is loading an agent, so the kill and the retries after it never share the CPU with a start-up.

        It is done once the fault's moment has come (inside the pause, or the held call), not before the
        invocation is sent: a forked agent loads in a tenth of a second, far inside either, and at that
        moment the machine is idle, while before the send every run is starting at once.
        """
        with self._starting_up():
            agent.wait_ready()
        self._wait_started()

    def _hold_in_flight(
        self,
        what: str,
        ledger: Callable[[], Sequence[ModelCall] | Sequence[Booking]],
        fault: Fault,
        agent: AgentHost,
        *,
        longer: str,
    ) -> None:
        """Wait until the fault's call (numbered in `ledger`) is in flight, ready the replacement, and sleep
        until `fault.after` seconds into the call; the call must still be in flight then."""

        def current() -> ModelCall | Booking | None:
            calls = ledger()
            return calls[fault.call - 1] if len(calls) >= fault.call else None

        def in_flight() -> bool:
            call = current()
            return call is not None and call.finished is None

        self._wait(f"{what} to be in flight", in_flight, timeout=60.0)
        self._prepare_replacement(agent)
        started = current()
        assert started is not None
        self._sleep(started.started + fault.after - time.time())
        if not in_flight():
            raise ExperimentError(f"{what} finished before the kill; {longer} {fault.after:g}s")

    def _sleep(self, seconds: float) -> None:
        if self.cancelled.wait(max(0.0, seconds)):
            raise LabCancelled("interrupted")

    # -- runs ----------------------------------------------------------------------------------------

    def next_id(self) -> int:
        """A number no other run, soak or sweep of this lab has: it names their services and lanes."""
        with self._ids_lock:
            return next(self._ids)

    def new_agent(
        self,
        *,
        mode: AgentMode,
        lane: Lane,
        service: str,
        target: str = DECK_AGENT,
        name: str = "agent",
        extra_env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> AgentHost:
        env = agent_env(
            openai_url=lane.base_url,
            tools_url=lane.tools_url,
            mode=mode,
            service=service,
            pause_s=self.agent_pause,
        )
        env.update(extra_env or {})
        return AgentHost(
            target=target,
            env=env,
            workdir=self.workdir / service,
            name=name,
            cwd=cwd,
            forkserver=self.forkserver,
        )

    def run(self, experiment: Experiment, *, restart_delay: float | None = None) -> RunRecord:
        """Carry out one experiment row and measure it.

        A row whose fault kills restate-server itself gets a server (or cluster) of its own, so the runs
        sharing the lab's are not killed with it. A row that kills a cluster node runs on the lab's cluster
        if it has one (the deck runs it alone, after the others: `run_rows`), else on a 3-node cluster of
        its own.
        """
        kind = experiment.fault.kind
        if kind == "server-kill-in-pause" or experiment.server_flags:
            # A row's experimental server flags are its own: never set on the server other rows share.
            nodes = self.cluster
        elif kind == "node-kill-in-pause" and self.cluster == 1:
            nodes = 3
        else:
            assert self._watcher is not None
            return self._run_on(_Engine(self.server, self._watcher), experiment, restart_delay)
        with self._new_server(nodes, dict(experiment.server_flags)) as server:
            watcher = Watcher(lambda: _sql_of(server), self.cancelled)
            try:
                return self._run_on(_Engine(server, watcher), experiment, restart_delay)
            finally:
                watcher.stop()

    def _run_on(self, engine: _Engine, experiment: Experiment, restart_delay: float | None) -> RunRecord:
        delay = experiment.restart_delay if restart_delay is None else restart_delay
        started = time.time()
        run_id = self.next_id()
        service = renamed_service("Agent", f"{experiment.name}_{run_id}")
        script = script_by_name(experiment.script, hold=experiment.hold)
        lane = self.stub.open_lane(script, name=f"{service.lower()}")
        lane.model_up = not experiment.model_down
        lane.latency = experiment.model_latency
        lane.booking_seconds = experiment.booking_seconds
        admin = engine.admin
        # The step log marks where the handler was at the kill, and where its replay got back to it.
        step_log = self.workdir / service / "steps.jsonl"
        extra_env = {STEP_LOG: str(step_log)} if experiment.step_log else {}
        if experiment.booking_key:
            extra_env["PAIDTWICE_BOOKING_KEY"] = experiment.booking_key
        if experiment.booking_pause:
            extra_env["PAIDTWICE_BOOKING_PAUSE_S"] = f"{experiment.booking_pause:g}"
        if experiment.explicit_recovery:
            extra_env[EXPLICIT_RECOVERY] = "1"
        if experiment.retry_policy is not None:
            extra_env[RETRY_POLICY] = experiment.retry_policy.to_env()
        with self.new_agent(
            mode=experiment.mode,
            lane=lane,
            service=service,
            target=experiment.agent,
            extra_env=extra_env,
        ) as agent:
            with self._starting_up():
                agent.start()
                admin.register_deployment(agent.uri)
            self._wait_started()
            invocation_id = engine.ingress.send(service, "run", QUESTION)
            watch = engine.watcher.watch(invocation_id)
            node_kill: NodeKill | None = None
            node_back_at: float | None = None
            kill_at: float | None
            up_at: float | None
            try:
                if experiment.fault.kind == "node-kill-in-pause":
                    node_kill = self._kill_leader(engine, invocation_id)
                    kill_at, up_at = node_kill.killed_at, None
                else:
                    kill_at, up_at = self._inject(engine, experiment, agent, lane, invocation_id, delay)
                self._wait(
                    f"{experiment.name} ({invocation_id}) to complete or pause",
                    lambda: settled(watch.last),
                    timeout=_RUN_TIMEOUT,
                )
            finally:
                engine.watcher.forget(invocation_id)
                if node_kill is not None and not self.cancelled.is_set():
                    node_back_at = self._restart_node(engine, node_kill.node)
            final = watch.observe(engine.sql.invocation(invocation_id))
            agent_attempts = agent.attempts(invocation_id)
            return self._measure(
                engine,
                experiment,
                service=service,
                delay=delay,
                invocation_id=invocation_id,
                lane=lane,
                watch=watch,
                final=final,
                agent_attempts=agent_attempts,
                kill_at=kill_at,
                up_at=up_at,
                started=started,
                admin=admin,
                step_log=step_log,
                node_kill=node_kill_record(
                    node_kill,
                    node_back_at,
                    engine.sql.journal(invocation_id),
                    agent_attempts,
                    pause=self._pause_seconds(),
                ),
            )

    def _pause_seconds(self) -> float:
        if self.agent_pause is not None:
            return float(self.agent_pause)
        # The agent's own default, from its module; imported only now, as for the curve's policy.
        from paidtwice.agent import weather

        return weather.RATE_LIMIT_PAUSE.total_seconds()

    def _kill_leader(self, engine: _Engine, invocation_id: str) -> NodeKill:
        """In the invocation's durable pause, SIGKILL the node leading its partition; wait for another node
        to take the partition over."""
        cluster = engine.server
        if not isinstance(cluster, RestateCluster):
            raise ExperimentError("node-kill-in-pause needs a cluster")
        self._wait(
            "the durable pause to be journaled",
            lambda: any(e.type == "Command: Sleep" for e in engine.sql.journal(invocation_id)),
            timeout=60.0,
        )
        led = cluster.leader_of(invocation_id)
        if led.leader is None:
            raise ExperimentError(f"partition {led.partition} of {invocation_id} has no leader to kill")
        killed_at = cluster.kill_node(led.leader)
        took_over: list[str] = []

        def moved() -> bool:
            for partition in cluster.leaders(quiet=True):
                if partition.partition == led.partition and partition.leader not in (None, led.leader):
                    took_over.append(partition.leader)
                    return True
            return False

        self._wait(f"another node to lead partition {led.partition}", moved, timeout=120.0)
        return NodeKill(led.partition, led.leader, killed_at, took_over[0], time.time())

    def _restart_node(self, engine: _Engine, node: str) -> float:
        """Start a killed node again on its data; returns when it answered. Then wait until every partition
        has a leader again, so the next run finds the cluster whole."""
        cluster = engine.server
        assert isinstance(cluster, RestateCluster)
        cluster.start_node(node)
        back_at = time.time()
        cluster.wait_healthy()
        return back_at

    def _inject(
        self,
        engine: _Engine,
        experiment: Experiment,
        agent: AgentHost,
        lane: Lane,
        invocation_id: str,
        delay: float,
    ) -> tuple[float | None, float | None]:
        """Land the fault; returns (kill time, time the agent listened again)."""
        fault = experiment.fault
        if fault.kind == "none":
            return None, None
        sql = engine.sql
        if fault.kind in ("kill-in-pause", "server-kill-in-pause"):
            self._wait(
                "the durable pause to be journaled",
                lambda: any(e.type == "Command: Sleep" for e in sql.journal(invocation_id)),
                timeout=60.0,
            )
            calls_in_pause = len(lane.model_calls(invocation_id))
        elif fault.kind == "kill-mid-call":
            self._hold_in_flight(
                f"model call {fault.call}",
                lambda: lane.model_calls(invocation_id),
                fault,
                agent,
                longer="hold it longer than",
            )
        elif fault.kind == "kill-mid-booking":
            self._hold_in_flight(
                f"booking {fault.call}",
                lambda: lane.bookings(invocation_id),
                fault,
                agent,
                longer="make it take longer than",
            )
        else:
            raise ExperimentError(f"unknown fault {fault.kind!r}")
        if fault.kind == "server-kill-in-pause":
            kill_at = time.time()
            engine.server.restart()
            return kill_at, time.time()
        if fault.kind == "kill-in-pause":
            self._prepare_replacement(agent)  # a held call's was prepared before the wait inside it
        kill_at = agent.kill()
        if fault.kind == "kill-in-pause" and (
            len(lane.model_calls(invocation_id)) > calls_in_pause
            # An agent that asks no model after its pause (the booking agent) says so in its journal.
            or any(e.type == "Command: Output" for e in sql.journal(invocation_id))
        ):
            raise ExperimentError(
                f"{experiment.name}: the agent was killed after the durable pause had ended; the kill "
                "missed its moment (the machine is too slow for the agent's pause, PAIDTWICE_PAUSE_S)"
            )
        # The replacement keeps the time itself; the lab only waits, and can be interrupted meanwhile.
        agent.release(at=kill_at + delay)
        self._sleep(kill_at + delay - time.time())
        return kill_at, agent.wait_up()

    def _measure(
        self,
        engine: _Engine,
        experiment: Experiment,
        *,
        service: str,
        delay: float,
        invocation_id: str,
        lane: Lane,
        watch: AttemptWatch,
        final: InvocationRow | None,
        agent_attempts: list[AgentAttempt],
        kill_at: float | None,
        up_at: float | None,
        started: float,
        admin: AdminClient,
        step_log: Path,
        node_kill: NodeKillRecord | None = None,
    ) -> RunRecord:
        sql = engine.sql
        journal = tuple(sql.journal(invocation_id))
        status = invocation_status(final.status) if final is not None else "unknown"
        calls = lane.model_calls(invocation_id)
        tools = lane.tool_runs(invocation_id)
        bookings = lane.bookings(invocation_id)
        attempts, total = watch.ordered(), watch.count(agent_attempts)
        after_kill = [a for a in agent_attempts if kill_at is not None and a.at > kill_at]
        paid, added = bill(calls, self.price_model), bill(extra_calls(calls), self.price_model)
        recovery = recovery_of(
            journal,
            status,
            kill_at=kill_at,
            up_at=up_at,
            calls=calls,
            agent=agent_attempts,
            step_log=step_log,
            invocation_id=invocation_id,
        )
        # A slow model's answers and a booking's confirmation are waits the row asks for.
        waits = [(c.started, c.finished) for c in calls if experiment.model_latency and c.finished]
        waits += [(b.started, b.finished) for b in bookings if b.finished]
        deliberate = deliberate_wait(
            journal, attempts, agent_attempts, kill_at, up_at, calls, started, waits=waits
        )
        record = RunRecord(
            name=experiment.name,
            mode=experiment.mode,
            stub=experiment.script,
            fault=experiment.fault.describe(),
            restart_delay=delay,
            status=status,
            invocation_id=invocation_id,
            service=service,
            lane=lane.name,
            model_calls=len(calls),
            tool_calls=len(tools),
            answer=_answer(engine, invocation_id, status),
            journal=journal,
            model_log=model_log_of(calls, started, price_model=self.price_model),
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
            server_version=self.server_version,
            admin_log=tuple(admin.log),
            started_at=started,
            killed_at=round(kill_at - started, 3) if kill_at is not None else None,
            usage=paid.usage,
            cost_usd=paid.cost_usd,
            extra_usage=added.usage,
            extra_cost_usd=added.cost_usd,
            price_model=self.price_model,
            prices_as_of=PRICES_AS_OF,
            model_latency=experiment.model_latency,
            recovery_s=recovery.recovery_s,
            retry_wait_s=recovery.retry_wait_s,
            recovery_breakdown=recovery.breakdown,
            bookings=len(bookings),
            booking_effects=sum(1 for b in bookings if b.effect),
            idempotency_key=experiment.booking_key,
            node_kill=node_kill,
            explicit_recovery=experiment.explicit_recovery,
            retry_policy=experiment.retry_policy.describe() if experiment.retry_policy else "",
            server_flags=tuple(f"{name}={value}" for name, value in experiment.server_flags),
            completion_result=final.completion_result if final is not None else None,
            protocol_version=sql.protocol_version(invocation_id),
        )
        checks = compare(experiment.expected, record)
        return replace(record, checks=checks, matches=all(c.ok for c in checks))

    def run_curve(self, curve: Curve) -> CurveRecord:
        """Run the curve's base experiment once per point (a restart delay, or a retry policy),
        concurrently, and predict each point from the policy its agent ran under and its measured down
        time."""
        rows = curve.points()
        runs = self.run_many(list(rows), concurrent=True)
        # The deck's policy is read from the agent's own module, which the lab imports only now: the import
        # costs CPU that must not hold up the start of the curve's runs, or land before their kills.
        from paidtwice.agent import weather

        points = []
        for (row, _), run in zip(rows, runs, strict=True):
            policy = row.retry_policy
            backoff = (
                Backoff.from_policy(weather.DECK_RETRY_POLICY)
                if policy is None
                else Backoff(
                    policy.initial_interval,
                    policy.exponentiation_factor,
                    policy.max_interval,
                    policy.max_attempts,
                )
            )
            prediction = predict_paid_calls(backoff, run.down_time or 0.0)
            points.append(
                CurvePoint(
                    delay=run.restart_delay,
                    down_time=round(run.down_time or 0.0, 3),
                    model_calls=run.model_calls,
                    predicted_model_calls=prediction.paid_calls,
                    predicted_range=prediction.range,
                    attempts_while_down=run.attempts_while_down,
                    status=run.status,
                    invocation_id=run.invocation_id,
                    usage=run.usage,
                    cost_usd=run.cost_usd,
                    extra_cost_usd=run.extra_cost_usd,
                    max_attempts=policy.max_attempts if policy is not None else None,
                    on_max_attempts=policy.on_max_attempts if policy is not None else "",
                    outcome=_outcome(run),
                )
            )
        deck_ok = not curve.expected_model_calls or tuple(p.model_calls for p in points) == tuple(
            curve.expected_model_calls
        )
        # What the policy does once its attempts are spent is part of the claim: pause leaves the invocation
        # paused, kill ends it as failed.
        ended_ok = all(
            p.outcome == {"pause": "paused", "kill": "failed"}[p.on_max_attempts]
            for p in points
            if p.on_max_attempts
        )
        matches = deck_ok and ended_ok and all(p.agrees for p in points)
        return CurveRecord(
            curve.name, tuple(points), curve.expected_model_calls, matches, tuple(runs), varies=curve.varies
        )

    def run_comparison(self, row: Comparison) -> ComparisonRecord:
        """Run both sides of a comparison (and any runs it sets beside them) at once, the same load on all,
        and set them side by side."""
        runs = self.run_many([(run, None) for run in row.runs()], concurrent=True)
        first, second = runs[0], runs[1]
        regain_difference = None
        difference: float | None
        if row.figure == "explicit recovery":
            difference = float(second.booking_effects - runs[-1].booking_effects)
            check = explicit_recovery_check(row, runs)
        elif row.figure == "recovery":
            difference = _difference(_replay_s(first), _replay_s(second))
            a, b = first.recovery_breakdown, second.recovery_breakdown
            if a is not None and b is not None:
                regain_difference = _difference(a.regain_s, b.regain_s)
            # Judged on the time to regain what the kill lost, not on the time to completion: after that
            # point both agents do the same work, except that the journaled one waits for the journal to
            # take its last answer, which the naive one does not (see `RecoveryBreakdown`).
            check = recovery_check(first, second, row.first.model_latency)
        else:
            difference = float(first.booking_effects - second.booking_effects)
            check = Check(
                "booking effects, key none vs stable key",
                f"{row.first.expected.booking_effects} vs {row.second.expected.booking_effects}",
                f"{first.booking_effects} ({first.idempotency_key}) vs "
                f"{second.booking_effects} ({second.idempotency_key})",
                (first.booking_effects, second.booking_effects)
                == (row.first.expected.booking_effects, row.second.expected.booking_effects),
            )
        checks = (check, *(c for run in runs for c in run.checks))
        return ComparisonRecord(
            name=row.name,
            figure=row.figure,
            deck_says=row.deck_says,
            runs=tuple(runs),
            difference=difference,
            recovery_difference_s=_difference(first.recovery_s, second.recovery_s),
            regain_difference_s=regain_difference,
            checks=checks,
            matches=check.ok and all(run.matches for run in runs),
        )

    def run_many(
        self,
        rows: Sequence[tuple[Experiment, float | None]],
        *,
        concurrent: bool,
        on_record: Callable[[RunRecord], None] | None = None,
    ) -> list[RunRecord]:
        """Run rows serially or all at once; `on_record` sees each record as soon as it is measured."""
        if not concurrent:
            records = []
            for experiment, delay in rows:
                record = self.run(experiment, restart_delay=delay)
                if on_record:
                    on_record(record)
                records.append(record)
            return records
        lock = threading.Lock()

        def one(row: tuple[Experiment, float | None]) -> RunRecord:
            record = self.run(row[0], restart_delay=row[1])
            if on_record:
                with lock:
                    on_record(record)
            return record

        with ThreadPoolExecutor(max_workers=max(1, len(rows))) as pool:
            futures = [pool.submit(one, row) for row in rows]
            try:
                return [future.result() for future in futures]
            except BaseException:
                self.cancelled.set()
                raise


def _outcome(run: RunRecord) -> str:
    """How a run's invocation ended: "paused", "succeeded", "failed", or its status if neither."""
    if run.status == "completed":
        return {"success": "succeeded", "failure": "failed"}.get(run.completion_result or "", "completed")
    return run.status


def explicit_recovery_check(row: Comparison, runs: Sequence[RunRecord]) -> Check:
    """The explicit-recovery claim: the changed run meets no mismatch and completes; the booking is made
    again without a key, once with a stable one (each run's own figures are judged in its checks)."""
    changed, *bookings = runs
    want = ", ".join(
        [f"{row.first.expected.status}, 0 RT0016"]
        + [f"{r.booking_key}: {r.expected.booking_effects}" for r in row.runs()[1:]]
    )
    got = ", ".join(
        [f"{changed.status}, {changed.mismatches} RT0016"]
        + [f"{r.idempotency_key}: {r.booking_effects}" for r in bookings]
    )
    ok = (
        changed.status == row.first.expected.status
        and changed.mismatches == 0
        and all(
            r.booking_effects == e.expected.booking_effects
            for r, e in zip(bookings, row.runs()[1:], strict=True)
        )
    )
    return Check("mismatches, then booking effects by key", want, got, ok)


def _answer(engine: _Engine, invocation_id: str, status: str) -> str | None:
    """The completed invocation's output, as the ingress returns it to a caller attaching to it."""
    if status != "completed":
        return None
    response = engine.ingress.attach(invocation_id, timeout=30.0)
    return str(response.json()) if response.status_code == 200 else None


def _replay_s(run: RunRecord) -> float | None:
    """Seconds of a run's recovery from the first attempt that reached the restarted agent: the wait before
    it is the server's retry timer, whose jitter is no part of what either agent does."""
    if run.recovery_s is None or run.retry_wait_s is None:
        return None
    return run.recovery_s - run.retry_wait_s


def _difference(a: float | None, b: float | None) -> float | None:
    return round(a - b, 3) if a is not None and b is not None else None
