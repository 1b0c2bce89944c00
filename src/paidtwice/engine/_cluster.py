"""A Restate cluster of the lab's own on loopback: N restate-server nodes, replicated metadata and log.

Every node has its own data directory, its own leased ports (fabric, admin, ingress) and its own process
group, and is started from a config file written into its directory, so a user can read what it ran with.
Node 1 provisions the cluster; the others join it through the replicated metadata servers every node runs.
The log is the replicated loglet with replication 2, so one node can die and nothing is lost.

Whether the cluster is healthy and which node leads each partition is asked of `restatectl`, the cluster's
own tool (pinned beside the server). Ingress and admin requests go to the first live node; a node killed
with `kill_node()` is started again on its data with `start_node()`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from paidtwice._exceptions import NotFound, ServerStartError, ServerUnreachable, UsageError
from paidtwice._pins import RESTATE_SERVER_VERSION, RESTATECTL_VERSION
from paidtwice.engine._http import http
from paidtwice.engine._janitor import forget, remove_at_exit
from paidtwice.engine._ports import HOST, PortLease, lease_port
from paidtwice.engine._process import Process, wait_until
from paidtwice.engine._provision import ensure_restatectl, ensure_server_binary
from paidtwice.engine._sql import QueryFailed, SqlClient

__all__ = ["MAX_NODES", "ClusterNode", "ClusterSqlClient", "PartitionLeader", "RestateCluster", "check_size"]

_START_TIMEOUT = 120.0
_SETTLE_S = 5.0
"""Seconds without a change of leader after which the cluster's partitions count as settled: the moves
after a node's restart were seen here up to 2 s apart."""
_SUSPECT_S = 5.0
"""The server's `gossip-suspect-interval` (default 5 s): a node that has just (re)started is suspect that
long, and only then may partitions move to it, so the settled wait starts no earlier."""
_FAILOVER_S = 60.0
"""How long a query may keep failing while the cluster recovers from a node's death before it is an error."""
_REPLICATION = 2
_PARTITIONS = 4
MAX_NODES = 7
"""The most nodes a lab's cluster may have. Every node shares one machine's cores and asks for 512 MB of
RocksDB memory; teams run 3, 5 or 7, and beyond that a loopback cluster measures the machine, not Restate."""


def check_size(nodes: int) -> None:
    """Refuse, in one line, a cluster the lab cannot run: below 3 nodes replication 2 cannot survive a node
    down; above `MAX_NODES` the machine would."""
    if not 3 <= nodes <= MAX_NODES:
        raise UsageError(
            f"--cluster takes 1 (one server) or 3 to {MAX_NODES} nodes, not {nodes}: replication "
            f"{_REPLICATION} needs 3 to survive a node down, and every node shares this machine"
        )


@dataclass(frozen=True)
class PartitionLeader:
    """One partition of the cluster and the node whose processor leads it, as restatectl reports it."""

    partition: int
    """Partition id."""
    leader: str | None
    """Name of the leading node ("node-2"), None while no processor leads."""
    epoch: int | None
    """The leader's epoch: it grows with every change of leader."""
    first_key: int
    """First partition key the partition owns."""
    last_key: int
    """Last partition key it owns (inclusive)."""


class ClusterNode:
    """One node of a `RestateCluster`: its name, directory, ports and process."""

    def __init__(self, *, index: int, base_dir: Path, leases: list[PortLease]) -> None:
        self.index = index
        """1-based position in the cluster."""
        self.name = f"node-{index}"
        """The node's name in the cluster (`node-name`)."""
        self.base_dir = base_dir
        """The node's data directory."""
        self._leases = leases
        self.fabric_port, self.admin_port, self.ingress_port = (lease.port for lease in leases)
        self.process: Process | None = None

    @property
    def fabric_url(self) -> str:
        return f"http://{HOST}:{self.fabric_port}/"

    @property
    def admin_url(self) -> str:
        return f"http://{HOST}:{self.admin_port}"

    @property
    def ingress_url(self) -> str:
        return f"http://{HOST}:{self.ingress_port}"

    @property
    def config_path(self) -> Path:
        return self.base_dir / "restate.toml"

    @property
    def log_path(self) -> Path:
        return self.base_dir / "restate-server.log"

    def alive(self) -> bool:
        return self.process is not None and self.process.alive()

    def healthy(self) -> bool:
        """Both the node's admin API and its ingress answer their health checks."""
        try:
            admin = http().get(f"{self.admin_url}/health", timeout=1.0)
            ingress = http().get(f"{self.ingress_url}/restate/health", timeout=1.0)
        except httpx.HTTPError:
            return False
        return admin.status_code == 200 and ingress.status_code == 200

    def release(self) -> None:
        for lease in self._leases:
            lease.release()
        self._leases = []


class RestateCluster:
    """N restate-server nodes on 127.0.0.1 forming one cluster, started on enter, every node's process group
    killed on exit (also on Ctrl-C and failure).

    It offers what the lab needs of a single `RestateServer` (`admin_url`, `ingress_url`, `restart()`,
    `stop()`), through any live node, and what a node failure needs: `leaders()`, `leader_of()`,
    `kill_node()`, `start_node()`.
    """

    def __init__(
        self,
        *,
        nodes: int = 3,
        version: str = RESTATE_SERVER_VERSION,
        echo: Callable[[str], None] = print,
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        check_size(nodes)
        self.extra_env = dict(extra_env or {})
        """Settings every node gets on top of paidtwice's (an experimental flag a row needs)."""
        self.version = version
        """restate-server version, from the npm registry."""
        self.size = nodes
        """Number of nodes."""
        self.base_dir = Path(tempfile.mkdtemp(prefix="paidtwice-cluster-"))
        """Holds each node's data directory (`node-1`, ...); removed on stop."""
        remove_at_exit(self.base_dir)  # also when paidtwice is SIGKILLed and cannot stop the cluster itself
        # Unique per cluster, so two clusters on one machine never take each other's nodes for their own.
        self.cluster_name = f"paidtwice-{os.getpid()}-{self.base_dir.name.rsplit('-', 1)[-1]}"
        """The cluster's name (`cluster-name`)."""
        self._echo = echo
        self.nodes: list[ClusterNode] = []
        """The nodes, node-1 first."""
        self._restatectl: Path | None = None
        # Every node is started from this one thread, which lives as long as the cluster: a child's
        # parent-death signal follows the thread that started it, and a node restarted from a run's
        # short-lived worker thread would otherwise be killed when that thread ends.
        self._starter: ThreadPoolExecutor | None = None
        self._last_start = 0.0

    # -- addresses -----------------------------------------------------------------------------------

    def live_nodes(self) -> list[ClusterNode]:
        return [node for node in self.nodes if node.alive()]

    @property
    def pid(self) -> int | None:
        """The pid of the first live node (a soak's memory figure reads one node); None when none runs."""
        live = [node for node in self.nodes if node.alive() and node.process is not None]
        return live[0].process.pid if live and live[0].process is not None else None

    def _entry_node(self) -> ClusterNode:
        live = self.live_nodes()
        if not live:
            raise ServerStartError(f"no node of the cluster is running (logs under {self.base_dir})")
        return live[0]

    @property
    def admin_url(self) -> str:
        """The admin API of the first live node: any node serves the whole cluster's."""
        return self._entry_node().admin_url

    @property
    def ingress_url(self) -> str:
        """The ingress of the first live node."""
        return self._entry_node().ingress_url

    def sql(self) -> ClusterSqlClient:
        """A SQL client that asks a live node, and asks again while the cluster is failing over."""
        return ClusterSqlClient(self)

    def node(self, name: str) -> ClusterNode:
        for node in self.nodes:
            if node.name == name:
                return node
        raise UsageError(f"the cluster has no node {name!r}")

    # -- lifecycle -----------------------------------------------------------------------------------

    def _config(self, node: ClusterNode) -> str:
        metadata = ", ".join(f'"{other.fabric_url}"' for other in self.nodes)
        return "\n".join(
            [
                f'node-name = "{node.name}"',
                f'cluster-name = "{self.cluster_name}"',
                f'base-dir = "{node.base_dir}"',
                # Exactly one node provisions; the others wait to be let in.
                f"auto-provision = {'true' if node.index == 1 else 'false'}",
                f"default-replication = {_REPLICATION}",
                # As the single lab server: few partitions, since no count depends on partitioning.
                f"default-num-partitions = {_PARTITIONS}",
                f'bind-ip = "{HOST}"',
                f"bind-port = {node.fabric_port}",
                f'advertised-address = "{node.fabric_url}"',
                'listen-mode = "tcp"',
                # Several lab servers may share one machine; the default asks for 2 GiB each.
                'rocksdb-total-memory-size = "512MB"',
                "",
                "[metadata-client]",
                f"addresses = [{metadata}]",
                "",
                "[admin]",
                f'bind-address = "{HOST}:{node.admin_port}"',
                "",
                "[ingress]",
                f'bind-address = "{HOST}:{node.ingress_port}"',
                "",
                "[bifrost]",
                'default-provider = "replicated"',
                "",
            ]
        )

    def _env(self, node: ClusterNode) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RESTATE_")}
        env.update(
            {
                "RESTATE_LOG_FORMAT": "compact",
                "DO_NOT_TRACK": "true",
                # The invoker's per-invocation temporary directories go with the node's data.
                "TMPDIR": str(node.base_dir / "tmp"),
            }
        )
        env.update(self.extra_env)
        return env

    def start(self) -> RestateCluster:
        binary = ensure_server_binary(self.version, echo=self._echo)
        self._restatectl = ensure_restatectl(RESTATECTL_VERSION, echo=self._echo)
        try:
            if not self.nodes:
                self.nodes = [
                    ClusterNode(
                        index=i,
                        base_dir=self.base_dir / f"node-{i}",
                        leases=[lease_port() for _ in range(3)],
                    )
                    for i in range(1, self.size + 1)
                ]
            for node in self.nodes:
                (node.base_dir / "tmp").mkdir(parents=True, exist_ok=True)
                node.config_path.write_text(self._config(node))
                node.process = Process(
                    [str(binary), "--config-file", str(node.config_path), "--no-logo"],
                    name=f"restate-server {self.version} {node.name}",
                    env=self._env(node),
                    log_path=node.log_path,
                    ports=[node.fabric_port, node.admin_port, node.ingress_port],
                )
            for node in self.nodes:
                self._start_process(node)
            self.wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_process(self, node: ClusterNode) -> None:
        if self._starter is None:
            self._starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="paidtwice-cluster")
        process = node.process
        assert process is not None
        self._starter.submit(process.start).result()
        self._last_start = time.monotonic()

    def wait_healthy(self, *, timeout: float = _START_TIMEOUT, down: Collection[str] = ()) -> None:
        """Wait until every running node answers its health checks, every partition has a leader, and no
        leader has changed for `_SETTLE_S` seconds. The nodes named in `down` were killed on purpose: their
        exit is no error, and the partitions they led settle on the others.

        A node started again takes some partitions back once it is no longer suspect (`_SUSPECT_S`), one
        at a time, and each move cuts off the invocations running there: a run that starts before the
        moves are over would pay for a failure that is not its own."""
        seen: list[tuple[tuple[tuple[int, str | None, int | None], ...], float]] = []

        def settled() -> bool:
            if time.monotonic() - self._last_start < _SUSPECT_S or not healthy():
                seen.clear()
                return False
            now = tuple((p.partition, p.leader, p.epoch) for p in self.leaders(quiet=True))
            if not seen or seen[0][0] != now:
                seen[:] = [(now, time.monotonic())]
            return time.monotonic() - seen[0][1] >= _SETTLE_S

        def healthy() -> bool:
            for node in self.nodes:
                process = node.process
                if node.name in down or process is None or node.alive() or process.returncode is None:
                    continue
                raise ServerStartError(
                    f"restate-server {node.name} exited with status {process.returncode}: "
                    f"{process.log_tail()} (log: {node.log_path})"
                )
            live = self.live_nodes()
            if not live or not all(node.healthy() for node in live):
                return False
            leaders = self.leaders(quiet=True)
            return bool(leaders) and all(p.leader is not None for p in leaders)

        if not wait_until(settled, timeout=timeout, interval=0.5):
            raise ServerStartError(
                f"the {self.size}-node cluster did not become healthy within {timeout:.0f}s "
                f"(logs: {self.base_dir}/node-*/restate-server.log)"
            )

    def kill_node(self, name: str) -> float:
        """SIGKILL one node's process group (its data stays); returns the time of the kill."""
        node = self.node(name)
        if node.process is None:
            raise UsageError(f"{name} was never started")
        killed_at = time.time()
        node.process.kill()
        return killed_at

    def start_node(self, name: str) -> None:
        """Start a killed node again on its data directory and ports, and wait until it answers."""
        node = self.node(name)
        if node.process is None:
            raise UsageError(f"{name} was never started")
        self._start_process(node)
        if not wait_until(node.healthy, timeout=_START_TIMEOUT, interval=0.1):
            raise ServerStartError(
                f"{name} did not answer within {_START_TIMEOUT:.0f}s of its restart (log: {node.log_path})"
            )

    def kill(self) -> None:
        """SIGKILL every node's process group (the data stays)."""
        errors: list[BaseException] = []
        for node in self.nodes:
            if node.process is not None:
                try:
                    node.process.kill()
                except BaseException as err:  # every node is killed even if one fails to go
                    errors.append(err)
        if errors:
            raise errors[0]

    def restart(self) -> None:
        """Kill every node and start them all again on their data: the whole cluster's crash."""
        self.kill()
        for node in self.nodes:
            self._start_process(node)
        self.wait_healthy()

    def alive(self) -> bool:
        return bool(self.live_nodes())

    def stop(self) -> None:
        try:
            self.kill()
        finally:
            for node in self.nodes:
                node.release()
            if self._starter is not None:
                self._starter.shutdown(wait=False)
            shutil.rmtree(self.base_dir, ignore_errors=True)
            forget(self.base_dir)

    def __enter__(self) -> RestateCluster:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- restatectl ----------------------------------------------------------------------------------

    def restatectl(self, *args: str, timeout: float = 20.0) -> str:
        """Run restatectl against the live nodes' fabric addresses; returns its output."""
        if self._restatectl is None:
            self._restatectl = ensure_restatectl(RESTATECTL_VERSION, echo=self._echo)
        addresses = ",".join(node.fabric_url for node in self.live_nodes())
        env = {k: v for k, v in os.environ.items() if not k.startswith("RESTATE")}
        env.update({"NO_COLOR": "1", "CLICOLOR": "0", "TERM": "dumb"})
        try:
            done = subprocess.run(
                [str(self._restatectl), "--address", addresses, "--connect-timeout", "1000", *args],
                capture_output=True,
                text=True,
                env=env,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as err:
            raise ServerStartError(f"restatectl {' '.join(args)} took over {timeout:.0f}s") from err
        if done.returncode != 0:
            last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise ServerStartError(f"restatectl {' '.join(args)} failed: {_plain(last[0])}")
        return _plain(done.stdout)

    def leaders(self, *, quiet: bool = False) -> list[PartitionLeader]:
        """Every partition, its keys and the node leading it, from restatectl's view of the cluster.

        restatectl numbers nodes in the order they joined (N1, N2, ...), not by name, so the leader's id is
        looked up in its `nodes` table. When two processors claim a partition (an old leader not yet known to
        be dead), the higher leader epoch leads. `quiet`: an error (a cluster still forming, a node just
        killed) reads as no partitions instead of raising."""
        try:
            text = self.restatectl("sql", "--json", _LEADERS_QUERY)
        except ServerStartError:
            if quiet:
                return []
            raise
        return parse_leaders(text)

    def leader_of(self, invocation_id: str) -> PartitionLeader:
        """The partition an invocation lives on, and its leader now. The partition key is the server's
        own reading of the invocation id (`sys_invocation_status.partition_key`)."""
        rows = self.sql().query(
            f"SELECT partition_key FROM sys_invocation_status WHERE id = '{invocation_id}'"
        )
        if not rows:
            raise NotFound(f"no invocation {invocation_id} on the cluster")
        key = int(rows[0]["partition_key"])
        for partition in self.leaders():
            if partition.first_key <= key <= partition.last_key:
                return partition
        raise ServerStartError(f"no partition of the cluster owns {invocation_id} (key {key})")


class ClusterSqlClient(SqlClient):
    """SQL through whichever node of the cluster is alive at each try.

    Just after a node dies, a query fanning out to the partitions it led fails on the nodes still up ("No
    such scanner", a refused connection) until another node leads them; such a query is asked again, of a
    live node, for up to a minute. A query the server rejects (4xx) fails at once."""

    def __init__(self, cluster: RestateCluster, *, timeout: float = 15.0) -> None:
        super().__init__(url="", timeout=timeout)
        self._cluster = cluster

    def query(self, sql: str) -> list[dict[str, Any]]:
        deadline = time.monotonic() + _FAILOVER_S
        while True:
            try:
                return SqlClient(self._cluster.admin_url, self.timeout).query(sql)
            except QueryFailed as err:
                if err.status < 500 or time.monotonic() > deadline:
                    raise
            except (ServerUnreachable, ServerStartError):
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.2)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _plain(text: str) -> str:
    return _ANSI.sub("", text)


_LEADERS_QUERY = (
    "SELECT p.partition_id, p.start_key, p.end_key, s.leader_epoch, n.name "
    "FROM partitions p "
    "LEFT JOIN partition_state s ON s.partition_id = p.partition_id AND s.effective_mode = 'Leader' "
    "LEFT JOIN nodes n ON n.plain_node_id = s.plain_node_id "
    "ORDER BY p.partition_id"
)


def parse_leaders(text: str) -> list[PartitionLeader]:
    """Read the rows of `_LEADERS_QUERY` (restatectl's `--json` array) into one leader per partition."""
    try:
        rows = json.loads(text or "[]")
    except ValueError as err:
        raise ServerStartError(f"restatectl answered something that is not JSON: {text[:200]!r}") from err
    best: dict[int, tuple[int, PartitionLeader]] = {}
    for row in rows:
        partition = int(row["partition_id"])
        epoch = int(row.get("leader_epoch") or -1)
        leader = PartitionLeader(
            partition=partition,
            leader=row.get("name") if row.get("leader_epoch") is not None else None,
            epoch=int(row["leader_epoch"]) if row.get("leader_epoch") is not None else None,
            first_key=int(row["start_key"]),
            last_key=int(row["end_key"]),
        )
        if partition not in best or epoch > best[partition][0]:
            best[partition] = (epoch, leader)
    return [best[partition][1] for partition in sorted(best)]
