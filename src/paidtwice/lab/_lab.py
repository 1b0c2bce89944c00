"""The lab: one restate-server (or cluster), one stub and one fork server, shared by every run made on it.

The deck, the sweep, the soak and `lab up` stand on it: it starts and ends the processes, starts every run's
agent through its target (`launch`) forked with its imports done, polls the server for every live
invocation, numbers runs, and makes every wait give up when it is interrupted. What a run does (its agent,
its fault, what it measures) is its user's.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import TracebackType

from paidtwice._exceptions import LabCancelled
from paidtwice._pins import RESTATE_SERVER_VERSION
from paidtwice.agent import (
    AGENT_PRELOAD,
    PAUSE_S,
    agent_env,
    preload_enabled,
    preload_env,
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
from paidtwice.lab._bill import DEFAULT_PRICE_MODEL, check_price_model
from paidtwice.lab._poll import Poller, wait_for
from paidtwice.stub import Lane, StubModel
from paidtwice.targets import Agent, Launch, Target, Trace

__all__ = ["DEFAULT_RESTART_DELAY", "Engine", "Lab", "sql_of"]

DEFAULT_RESTART_DELAY = 1.25
"""Seconds an agent stays down after a kill, in the deck's rows and by default in a sweep. With the deck
agent's backoff (200 ms doubling to 2 s, plus up to 30% jitter) two retries fall in that window whatever the
jitter: the second lands by 0.8 s, the third not before 1.4 s. So a mismatch that never heals is paid for on
the 17 attempts left of 20: the deck's figure. The delay sits late in that gap: a loaded server fires its
retries late, never early."""

_log = logging.getLogger("paidtwice.lab")
_CLUSTER_PAUSE_S = "4"
"""The deck agent's pause on a cluster: every SQL read there fans out over the nodes, and a kill must still
land inside the pause. No count the deck reports depends on the pause's length."""


def sql_of(server: RestateServer | RestateCluster) -> SqlClient:
    """A SQL client for the server; on a cluster, one that asks a live node and rides out a failover."""
    return server.sql() if isinstance(server, RestateCluster) else SqlClient(server.admin_url)


@dataclass(frozen=True)
class Engine:
    """The server (or cluster) a run talks to, and the poller polling it."""

    server: RestateServer | RestateCluster
    poller: Poller

    @cached_property
    def admin(self) -> AdminClient:
        """One client per run: the admin requests a run's fault makes are in the run's record."""
        return AdminClient(self.server.admin_url)

    @property
    def sql(self) -> SqlClient:
        return sql_of(self.server)

    @property
    def ingress(self) -> IngressClient:
        return IngressClient(self.server.ingress_url)


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
        self._poller: Poller | None = None
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

    # The clients are the engine's; a new one at each read, as the engine of each run has its own.
    @property
    def admin(self) -> AdminClient:
        return self.engine.admin

    @property
    def sql(self) -> SqlClient:
        return self.engine.sql

    @property
    def ingress(self) -> IngressClient:
        return self.engine.ingress

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
            self._poller = Poller(lambda: sql_of(self.server), self.cancelled)
        except BaseException:
            self.close()
            raise
        return self

    @contextlib.contextmanager
    def engine_beside(self, nodes: int, flags: Mapping[str, str]) -> Iterator[Engine]:
        """A server (or cluster of `nodes`) of its own beside the lab's, `flags` in its environment, polled
        while it runs: for a run that kills it, or needs flags the shared one must not have."""
        with self._new_server(nodes, dict(flags)) as server:
            poller = Poller(lambda: sql_of(server), self.cancelled)
            try:
                yield Engine(server, poller)
            finally:
                poller.stop()

    def _new_server(self, nodes: int, flags: dict[str, str] | None = None) -> RestateServer | RestateCluster:
        if nodes == 1:
            return RestateServer(version=self.server_version, echo=self.echo, extra_env=flags)
        return RestateCluster(nodes=nodes, version=self.server_version, echo=self.echo, extra_env=flags)

    def close(self) -> None:
        self.cancelled.set()
        if self._poller is not None:
            self._poller.stop()
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

    @property
    def engine(self) -> Engine:
        """The lab's server and the poller polling it."""
        if self._poller is None:
            raise RuntimeError("the lab is not started")
        return Engine(self.server, self._poller)

    # -- waiting -------------------------------------------------------------------------------------

    def wait(self, what: str, condition: Callable[[], bool], timeout: float) -> None:
        """Poll `condition` until it holds (`wait_for`); gives up when the lab is interrupted."""
        wait_for(what, condition, timeout=timeout, stop=self.cancelled.is_set)

    @contextlib.contextmanager
    def starting_up(self) -> Iterator[None]:
        """A run's start-up: its agent processes load (the costly part, in CPU) and register."""
        with self._started:
            self._starting += 1
        try:
            yield
        finally:
            with self._started:
                self._starting -= 1
                self._started.notify_all()

    def wait_started(self) -> None:
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

    def sleep(self, seconds: float) -> None:
        """Sleep, unless the lab is interrupted (`LabCancelled`)."""
        if self.cancelled.wait(max(0.0, seconds)):
            raise LabCancelled("interrupted")

    # -- agents ----------------------------------------------------------------------------------------

    def next_id(self) -> int:
        """A number no other run, soak or sweep of this lab has: it names their services and lanes."""
        with self._ids_lock:
            return next(self._ids)

    def launch(
        self,
        target: Target,
        lane: Lane,
        served_as: str,
        *,
        env: Mapping[str, str] | None = None,
        workdir: Path | None = None,
        hold_entries: int | None = None,
        alone: bool = False,
        hold_inbound: bool = True,
        traced: bool = True,
    ) -> tuple[Agent, Trace]:
        """`target`'s agent for one run (not started yet), and the trace the run leaves: the one way every run
        of the lab (the deck's rows, the sweep's, the soak's, `lab up`) starts its agent.

        Its model and tools are the stub's `lane`, its service is served as `served_as`; its environment is
        the target's own, the lane's addresses over it (`agent_env`), then `env`; the deck agent's pause is
        the target's, else the lab's. Its logs and step log go to `workdir` (by default the lab's, under
        `served_as`). Its processes fork from the lab's fork server, or from one that has also imported the
        app's framework (`forkserver_for`). The rest is `Launch`'s."""
        workdir = workdir or self.workdir / served_as
        given = dict(target.env)
        agent_environment = agent_env(
            given=given,
            openai_url=lane.base_url,
            anthropic_url=lane.anthropic_base_url,
            gemini_url=lane.gemini_base_url,
            tools_url=lane.tools_url,
            pause_s=None if PAUSE_S in given else self.agent_pause,
        )
        agent_environment.update(env or {})
        return target.launch(
            Launch(
                agent_environment,
                workdir,
                served_as,
                workdir / "steps.jsonl",
                lane,
                self.forkserver,
                hold_entries,
                alone,
                preloading=lambda modules, cwd: self.forkserver_for(modules, env=agent_environment, cwd=cwd),
                hold_inbound=hold_inbound,
                traced=traced,
            )
        )
