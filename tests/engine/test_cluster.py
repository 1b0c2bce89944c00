"""The lab on a real 3-node Restate cluster: a node killed under a run, and under load."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest
from support import (
    DEADLINE,
    LOOPBACK,
    alive,
    assert_eventually,
    descendants,
    listening_addresses,
    temp_dirs_in_use,
)

from paidtwice._pins import RESTATE_SERVER_VERSION, RESTATECTL_VERSION
from paidtwice.agent import CLEAN_JOURNALED_JOURNAL
from paidtwice.deck import Deck, experiment_by_name
from paidtwice.deck._experiments import Experiment
from paidtwice.deck._faults import FaultedRun, Landing, NodeKillInPause
from paidtwice.engine import RestateCluster, ensure_restatectl
from paidtwice.engine._ports import is_port_free
from paidtwice.lab import Lab
from paidtwice.report import format_soak
from paidtwice.soak import SoakOptions, soak


@pytest.fixture(scope="module")
def beside(request: pytest.FixtureRequest) -> Iterator[tuple[Lab, RestateCluster]]:
    """The session's `cluster_lab` and a second 3-node cluster, started at the same time: a start is mostly
    waiting for the cluster's partitions to settle, and two settle in the time of one. The second is the
    subject of the first test, which stops it before the others kill nodes of the first."""
    second = RestateCluster(nodes=3, echo=lambda message: None)
    pool = ThreadPoolExecutor(max_workers=1)
    starting = pool.submit(second.start)  # a failed start stops what it started
    try:
        first = request.getfixturevalue("cluster_lab")
        starting.result()
        yield first, second
    finally:
        wait([starting])
        pool.shutdown()
        if second.alive():
            second.stop()


def test_a_second_cluster_beside_the_first_is_its_own(beside: tuple[Lab, RestateCluster]) -> None:
    cluster_lab, second = beside
    first = cluster_lab.server
    assert isinstance(first, RestateCluster)
    try:
        assert second.cluster_name != first.cluster_name
        assert second.base_dir != first.base_dir
        assert not ports(first) & ports(second)
        pids = [node.process.pid for node in second.nodes if node.process is not None]
        assert len(pids) == 3
        for pid in pids:
            addresses = listening_addresses(pid)
            assert addresses and all(a.startswith(LOOPBACK + ":") for a in addresses), addresses
        assert {p.leader for p in second.leaders()} <= {node.name for node in second.nodes}
    finally:
        second.stop()
    # Stopped: no node left, every port free, its directories gone; the first cluster untouched.
    assert_eventually(lambda: not any(alive(pid) for pid in pids), timeout=10, what="the nodes to be gone")
    assert all(is_port_free(port) for port in ports(second))
    assert not second.base_dir.exists()
    assert all(node.healthy() for node in first.nodes)


def test_node_kill_in_pause_completes_with_the_clean_counts(cluster_lab: Lab) -> None:
    row = experiment_by_name("node-kill-in-pause")
    assert isinstance(row, Experiment)
    record = Deck(cluster_lab).run(row)
    assert record.status == "completed"
    assert (record.model_calls, record.tool_calls) == (2, 1)
    assert tuple(entry.label() for entry in record.journal) == CLEAN_JOURNALED_JOURNAL
    assert [e.index for e in record.journal] == list(range(len(CLEAN_JOURNALED_JOURNAL)))
    assert record.matches, record.checks
    kill = record.node_kill
    assert kill is not None
    assert kill.killed_node != kill.took_over
    assert kill.stall_to_next_entry is not None and kill.stall_to_next_entry > 0
    assert kill.stall_to_completion is not None and kill.stall_to_completion >= kill.stall_to_next_entry
    assert kill.resumed_after is not None and kill.resumed_after > 0
    assert kill.node_back_after is not None
    cluster = cluster_lab.server
    assert isinstance(cluster, RestateCluster)
    # The killed node was started again on its data.
    assert len(cluster.live_nodes()) == 3


@dataclass(frozen=True)
class LateNodeKill(NodeKillInPause):
    """The row's node kill, landing only once the pause's end is journaled, as a loaded lab's kill does."""

    landed: list[float] = field(default_factory=list, compare=False)
    """When `land` returned: the held pause ends then."""

    def land(self, run: FaultedRun) -> Landing:
        def pause_over() -> bool:
            return any(e.type == "Notification: Sleep" for e in run.engine.sql.journal(run.invocation_id))

        run.wait("the pause's end to be journaled", pause_over, 60.0)
        landing = super().land(run)
        self.landed.append(time.time())
        return landing


def test_a_node_kill_after_the_pause_ended_asks_the_model_nothing_again(cluster_lab: Lab) -> None:
    # The first node to take the partition over hands it on a second or more later, as the cluster
    # reconfigures without the dead node: an attempt that went past the pause in between was cut off with its
    # model call answered and not journaled, and its replay paid it again (3 calls, once in CI at load 20-28).
    # The pause is held until the leaders have settled, so the next model call comes only after.
    fault = LateNodeKill()
    row = replace(experiment_by_name("node-kill-in-pause"), fault=fault)
    assert isinstance(row, Experiment)
    record = Deck(cluster_lab).run(row)
    assert record.status == "completed"
    assert (record.model_calls, record.tool_calls) == (2, 1)
    kill = record.node_kill
    assert kill is not None and kill.pause_left_at_kill == 0
    calls = cluster_lab.stub.ledger.model_calls(record.lane, record.invocation_id)
    assert len(fault.landed) == 1 and calls[1].started > fault.landed[0], (calls, fault.landed)
    assert tuple(entry.label() for entry in record.journal) == CLEAN_JOURNALED_JOURNAL


def test_soak_with_node_kills_loses_nothing(cluster_lab: Lab) -> None:
    record = soak(cluster_lab, SoakOptions(invocations=60, kills=0, node_kills=2))
    assert record.sent == 60
    assert record.lost == 0
    assert record.completed == 60
    assert len(record.node_kills) == 2
    first, second = record.node_kills
    # Never the same node twice in a row, and each kill landed while invocations on its partitions ran: the
    # second too (sent at once, every invocation had settled before the cluster did from the first kill).
    assert first.node != second.node
    assert first.running > 0 and second.running > 0
    assert record.waves == (30, 30)
    assert "sent in 2 waves (30, 30), each just before its node kill" in format_soak(record)
    assert record.peak_memory.server > 0  # the largest node's
    assert record.unfinished == 0
    assert 0 <= record.extra_model_calls <= record.bound  # agent kills, and what the node kills cut off
    assert record.ok


def test_cluster_options_refuse_what_cannot_run() -> None:
    for args, says in (
        (["soak", "--node-kills", "2"], "--node-kills needs a cluster"),
        (
            ["soak", "--cluster", "3", "--node-kills", "20", "--invocations", "300"],
            "--node-kills 20 needs at least 400 invocations, not 300",
        ),
        (["run", "clean", "--cluster", "2"], "--cluster takes 1 (one server) or 3 to 7 nodes, not 2"),
        # Refused before a node starts: a hundred nodes would take the machine down, not test Restate.
        (["soak", "--cluster", "100"], "--cluster takes 1 (one server) or 3 to 7 nodes, not 100"),
        (["deck", "--cluster", "8"], "--cluster takes 1 (one server) or 3 to 7 nodes, not 8"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "paidtwice", *args], capture_output=True, text=True, timeout=DEADLINE
        )
        assert done.returncode == 2, done.stderr
        assert says in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr  # nothing started, nothing said


def test_sigkill_of_paidtwice_takes_its_cluster_with_it(tmp_path: Path) -> None:
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "paidtwice",
            "run",
            "clean",
            "--cluster",
            "3",
            "--json",
            str(tmp_path / "r.json"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    try:

        def nodes() -> set[int]:
            return {pid for pid in descendants(run.pid) if "restate-server" in command_line(pid)}

        assert_eventually(lambda: len(nodes()) >= 3, timeout=120, what="three nodes")
        started = descendants(run.pid)
        dirs = temp_dirs_in_use(started)
        assert any(d.name.startswith("paidtwice-cluster-") for d in dirs), dirs
        run.kill()
        run.wait()
        assert_eventually(lambda: not any(alive(p) for p in started), timeout=10, what="orphans to die")
        # The janitor removes what the killed paidtwice could not: the cluster's data too.
        assert_eventually(lambda: not any(d.exists() for d in dirs), timeout=30, what="its directories gone")
    finally:
        run.kill()
        run.wait()


def ports(cluster: RestateCluster) -> set[int]:
    return {port for n in cluster.nodes for port in (n.fabric_port, n.admin_port, n.ingress_port)}


def command_line(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
    except OSError:
        return ""


def test_restatectl_is_the_pinned_one_beside_the_server() -> None:
    assert RESTATECTL_VERSION == RESTATE_SERVER_VERSION
    binary = ensure_restatectl(echo=lambda message: None)
    done = subprocess.run(
        [str(binary), "--version"], capture_output=True, text=True, timeout=DEADLINE, check=True
    )
    assert done.stdout.split()[:2] == ["restatectl", RESTATECTL_VERSION]


def test_ctrl_c_in_a_cluster_soak_ends_every_node_and_keeps_what_it_measured(tmp_path: Path) -> None:
    out, err = tmp_path / "soak.json", tmp_path / "stderr.txt"
    with err.open("w") as stderr:
        soaking = subprocess.Popen(
            [sys.executable, "-m", "paidtwice", "soak", "--cluster", "3", "--invocations", "60"]
            + ["--kills", "0", "--node-kills", "2", "--json", str(out)],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            cwd=tmp_path,
        )
    try:

        def nodes() -> set[int]:
            return {pid for pid in descendants(soaking.pid) if "restate-server" in command_line(pid)}

        assert_eventually(lambda: len(nodes()) >= 3, timeout=120, what="three nodes")
        dirs = temp_dirs_in_use([soaking.pid, *descendants(soaking.pid)])
        cluster_dirs = [d for d in dirs if d.name.startswith("paidtwice-cluster-")]
        assert cluster_dirs, dirs
        # The first wave is sent; its node kill follows 0.7 s later and waits 10 s or more for the cluster to
        # settle: the Ctrl-C lands around a node's death and restart.
        assert_eventually(lambda: "sent 30/60" in err.read_text(), timeout=180, what="the first wave sent")
        soaking.send_signal(signal.SIGINT)
        stdout, _ = soaking.communicate(timeout=DEADLINE)
        said = err.read_text()
        assert soaking.returncode == 130, said
        assert "Traceback" not in said and "interrupted" in said
        # No node of this cluster outlives it (a restarted node has a pid of its own: found by its config).
        assert_eventually(
            lambda: not processes_mentioning(str(cluster_dirs[0])), timeout=30, what="every node gone"
        )
        assert_eventually(lambda: not any(d.exists() for d in dirs), timeout=30, what="its directories gone")
        # What it measured until then: printed, and on disk.
        assert "gave up waiting: interrupted" in stdout or "unfinished 0" in stdout, stdout
        record = json.loads(out.read_text())
        assert record["record"] == "soak" and record["sent"] >= 30
        outcomes = ("completed", "unfinished", "paused", "lost")
        assert sum(record[outcome] for outcome in outcomes) == record["sent"]
        assert record["extra_model_calls"] >= 0  # a call an unfinished invocation has yet to make is not owed
    finally:
        soaking.kill()
        soaking.wait()


def processes_mentioning(text: str) -> list[int]:
    return [int(pid) for pid in os.listdir("/proc") if pid.isdigit() and text in command_line(int(pid))]
