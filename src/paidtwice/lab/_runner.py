"""Run experiments on a real Restate server, a real agent process and the stub model.

A `Lab` owns one restate-server, one stub and one fork server for any number of runs; each run gets its own
agent process (forked with its imports done), port, stub lane, service name and invocation, so runs can go
concurrently without sharing a count. A run: arm its fault (`_faults`: the moment it kills in is held open);
start the agent, load its replacement beside it, register it; wait until no other run is starting; send the
invocation; let the fault land (wait for its moment, kill, keep the agent down for the restart delay, open
the replacement's port); wait until the invocation completes or pauses; measure.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType

from paidtwice._exceptions import LabCancelled
from paidtwice._pins import RESTATE_SERVER_VERSION
from paidtwice.agent import (
    AGENT_PRELOAD,
    DECK_AGENT,
    EXPLICIT_RECOVERY,
    PAUSE_S,
    QUESTION,
    RETRY_POLICY,
    STEP_LOG,
    AgentHost,
    AgentMode,
    CommandAgent,
    agent_env,
    node_path,
    preload_enabled,
    preload_env,
    renamed_service,
)
from paidtwice.engine import (
    AdminClient,
    ForkRefused,
    ForkServer,
    IngressClient,
    RestateCluster,
    RestateServer,
    SqlClient,
    check_size,
    forget,
    remove_at_exit,
)
from paidtwice.lab._bill import (
    DEFAULT_PRICE_MODEL,
    check_price_model,
)
from paidtwice.lab._comparisons import run_comparison
from paidtwice.lab._curves import run_curve
from paidtwice.lab._experiments import Comparison, Curve, Experiment
from paidtwice.lab._faults import Engine, FaultedRun, Landing, sql_of
from paidtwice.lab._measures import MISMATCH_CODE as MISMATCH_CODE
from paidtwice.lab._measures import attempt_log_of as attempt_log_of
from paidtwice.lab._measures import model_log_of as model_log_of
from paidtwice.lab._measures import node_kill_record
from paidtwice.lab._measures import tool_log_of as tool_log_of
from paidtwice.lab._run_record import RunSeen, measure_run
from paidtwice.lab._together import run_together
from paidtwice.lab._watch import Watcher, settled, wait_for
from paidtwice.results import (
    ComparisonRecord,
    CurveRecord,
    RunRecord,
)
from paidtwice.stub import Lane, StubModel, script_by_name

__all__ = ["Lab"]

_REPO = Path(__file__).resolve().parents[3]
"""The repository's root, from which a row's `command_dir` is named (examples/ts_agent)."""
_log = logging.getLogger("paidtwice.lab")
_CLUSTER_PAUSE_S = "4"
"""The deck agent's pause on a cluster. A kill must land inside the pause, and on a cluster every SQL read
fans out over the nodes: with every deck row starting at once, a kill missed a 2 s pause here. No count the
deck reports depends on the pause's length."""


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
        self.preload = preload_enabled()
        """Fork an app's agents from a fork server that has imported its framework (`forkserver_for`);
        `PAIDTWICE_PRELOAD=0` turns it off."""
        self._preloading: dict[tuple[object, ...], ForkServer] = {}
        self._preloading_lock = threading.Lock()
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

    def forkserver_for(
        self, modules: Sequence[str], *, env: Mapping[str, str], cwd: Path | None
    ) -> ForkServer:
        """The fork server for agents of `env` that run in `cwd` and import `modules` (a framework on
        `paidtwice.agent._preload`'s allowlist): one forked from the lab's that has imported them too, in
        that environment (less each run's own variables) and directory, made once and kept for the lab's
        life; the lab's own when `modules` is empty, the preload is off, or it cannot be made (said at debug
        level)."""
        if not modules or not self.preload:
            return self.forkserver
        environment = preload_env(env)
        key = (tuple(modules), str(cwd or ""), tuple(sorted(environment.items())))
        try:
            with self._preloading_lock:
                server = self._preloading.get(key)
                if server is None:
                    log = self.workdir / f"forkserver-{len(self._preloading) + 1}.log"
                    server = ForkServer.forked_from(
                        self.forkserver, preload=modules, env=environment, cwd=cwd, log_path=log
                    )
                    self._preloading[key] = server
            server.wait_ready()
        except ForkRefused as refused:
            _log.debug(
                "agents importing %s are forked without them preloaded: %s", ", ".join(modules), refused
            )
            return self.forkserver
        return server

    @property
    def admin(self) -> AdminClient:
        return AdminClient(self.server.admin_url)

    @property
    def sql(self) -> SqlClient:
        return sql_of(self.server)

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
            for preloading in self._preloading.values():
                preloading.close()
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

    def _wait_within(self, what: str, condition: Callable[[], bool], timeout: float) -> None:
        self._wait(what, condition, timeout=timeout)

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
        """Before a run sends its invocation: wait until no run of the lab is starting up, so that no kill and
        no retry lands while agent processes load beside the server: on a small machine that delays the
        server's retries by a tenth of a second, enough to move a retry across the agent's restart. Never
        inside a fault's window: every run's replacement is loaded before it sends."""
        deadline = time.monotonic() + 120.0
        with self._started:
            while self._starting and not self.cancelled.is_set() and time.monotonic() < deadline:
                self._started.wait(0.1)
        if self.cancelled.is_set():
            raise LabCancelled("interrupted while runs were starting")

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

    def _agent_for(
        self, experiment: Experiment, lane: Lane, service: str, extra_env: dict[str, str]
    ) -> AgentHost | CommandAgent:
        """The row's agent: the deck's (or a Python app) on the fork server, or a command behind a proxy."""
        if not experiment.command:
            return self.new_agent(
                mode=experiment.mode, lane=lane, service=service, target=experiment.agent, extra_env=extra_env
            )
        # A command's calls carry no invocation id; the lane is the run's own, so each of its calls is this
        # invocation's.
        lane.single = True
        env = {
            **agent_env(openai_url=lane.base_url, tools_url=lane.tools_url),
            **node_path(),
            "TOOLS_URL": lane.tools_url,
            "AGENT_MODE": experiment.mode,
            "SERVICE": service,
            "PAUSE_MS": f"{float(self._pause_seconds()) * 1000:g}",
            **dict(experiment.command_env),
        }
        return CommandAgent(
            command=experiment.command,
            env=env,
            workdir=self.workdir / service,
            service=service,
            renamed=service,
            cwd=_REPO / experiment.command_dir,
        )

    def run(self, experiment: Experiment, *, restart_delay: float | None = None) -> RunRecord:
        """Carry out one experiment row and measure it.

        A row whose fault kills restate-server itself gets a server (or cluster) of its own, so the runs
        sharing the lab's are not killed with it. A row that kills a cluster node runs on the lab's cluster
        if it has one (the deck runs it alone, after the others: `run_rows`), else on a 3-node cluster of
        its own.
        """
        fault = experiment.fault
        if fault.own_server or experiment.server_flags:
            # A row's experimental server flags are its own: never set on the server other rows share.
            nodes = self.cluster
        elif fault.nodes > self.cluster:
            nodes = fault.nodes
        else:
            assert self._watcher is not None
            return self._run_on(Engine(self.server, self._watcher), experiment, restart_delay)
        with self._new_server(nodes, dict(experiment.server_flags)) as server:
            watcher = Watcher(lambda: sql_of(server), self.cancelled)
            try:
                return self._run_on(Engine(server, watcher), experiment, restart_delay)
            finally:
                watcher.stop()

    def _run_on(self, engine: Engine, experiment: Experiment, restart_delay: float | None) -> RunRecord:
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
        extra_env = _agent_env(experiment, step_log)
        fault = experiment.fault
        with self._agent_for(experiment, lane, service, extra_env) as agent:
            run = FaultedRun(experiment.name, engine, agent, lane, delay, self._wait_within, self._sleep)
            fault.arm(run)
            with self._starting_up():
                # The agent and its replacement load side by side; the replacement is ready before the
                # invocation is sent, so nothing loads inside the fault's window.
                agent.prepare(ahead=2 if run.replacement else 1)
                agent.go(hold_pause=run.hold_pause)
                if run.replacement:
                    agent.wait_ready()
                admin.register_deployment(agent.uri)
            self._wait_started()
            invocation_id = engine.ingress.send(service, "run", QUESTION)
            run.invocation_id = invocation_id
            watch = engine.watcher.watch(invocation_id)
            landing: Landing | None = None
            node_back_at: float | None = None
            try:
                landing = fault.land(run)
                self._wait(
                    f"{experiment.name} ({invocation_id}) to complete or pause",
                    lambda: settled(watch.last),
                    timeout=experiment.settles_within,
                )
            finally:
                engine.watcher.forget(invocation_id)
                if landing is not None and not self.cancelled.is_set():
                    node_back_at = fault.settle(run, landing)
            final = watch.observe(engine.sql.invocation(invocation_id))
            agent_attempts = agent.attempts(invocation_id)
            seen = RunSeen(
                service=service,
                delay=delay,
                invocation_id=invocation_id,
                lane=lane,
                watch=watch,
                final=final,
                agent_attempts=agent_attempts,
                kill_at=landing.kill_at,
                up_at=landing.up_at,
                started=started,
                admin=admin,
                step_log=step_log,
                node_kill=node_kill_record(
                    landing.node_kill,
                    node_back_at,
                    engine.sql.journal(invocation_id),
                    agent_attempts,
                    pause=self._pause_seconds(),
                ),
            )
            return measure_run(
                engine.sql,
                engine.ingress,
                experiment,
                seen,
                price_model=self.price_model,
                server_version=self.server_version,
            )

    def _pause_seconds(self) -> float:
        if self.agent_pause is not None:
            return float(self.agent_pause)
        # The agent's own default, from its module; imported only now, as for the curve's policy.
        from paidtwice.agent import weather

        return weather.RATE_LIMIT_PAUSE.total_seconds()

    def run_curve(self, curve: Curve) -> CurveRecord:
        """Run the curve's base experiment once per point, concurrently (see `run_curve`)."""
        return run_curve(self, curve)

    def run_comparison(self, row: Comparison) -> ComparisonRecord:
        """Run both sides of a comparison at once, and set them side by side (see `run_comparison`)."""
        return run_comparison(self, row)

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

        def one(experiment: Experiment, delay: float | None) -> RunRecord:
            record = self.run(experiment, restart_delay=delay)
            if on_record:
                with lock:
                    on_record(record)
            return record

        return run_together(
            [
                (_point_name(experiment, delay), functools.partial(one, experiment, delay))
                for experiment, delay in rows
            ],
            cancelled=self.cancelled,
            thread_name="paidtwice-run",
        )


def _point_name(experiment: Experiment, delay: float | None) -> str:
    """A run among others of one row (a curve's point, a comparison's side), by what sets it apart."""
    if delay is not None:
        return f"{experiment.name} (restart delay {delay:g} s)"
    if experiment.retry_policy is not None:
        return f"{experiment.name} ({experiment.retry_policy.describe()})"
    return experiment.name


def _agent_env(experiment: Experiment, step_log: Path) -> dict[str, str]:
    """What the row sets in its agent's environment, beside the lab's own."""
    env = {STEP_LOG: str(step_log)} if experiment.step_log else {}
    if experiment.booking_key:
        env["PAIDTWICE_BOOKING_KEY"] = experiment.booking_key
    if experiment.booking_pause:
        env["PAIDTWICE_BOOKING_PAUSE_S"] = f"{experiment.booking_pause:g}"
    if experiment.explicit_recovery:
        env[EXPLICIT_RECOVERY] = "1"
    if experiment.retry_policy is not None:
        env[RETRY_POLICY] = experiment.retry_policy.to_env()
    return env
