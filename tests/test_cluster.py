"""The lab on a real 3-node Restate cluster: a node killed under a run, and under load."""

from __future__ import annotations

import subprocess
import sys

from paidtwice.engine import RestateCluster
from paidtwice.lab import CLEAN_JOURNALED_JOURNAL, Lab, experiment_by_name
from paidtwice.lab._experiments import Experiment
from paidtwice.lab._soak import soak


def test_node_kill_in_pause_completes_with_the_clean_counts(cluster_lab: Lab) -> None:
    row = experiment_by_name("node-kill-in-pause")
    assert isinstance(row, Experiment)
    record = cluster_lab.run(row)
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


def test_soak_with_node_kills_loses_nothing(cluster_lab: Lab) -> None:
    record = soak(cluster_lab, invocations=60, kills=0, node_kills=2)
    assert record.sent == 60
    assert record.lost == 0
    assert record.completed == 60
    assert len(record.node_kills) == 2
    first, second = record.node_kills
    # Never the same node twice in a row, and each kill landed while invocations on its partitions ran.
    assert first.node != second.node
    assert first.running > 0
    assert 0 <= record.extra_model_calls <= record.in_flight_at_kills + record.cut_off_by_node_kills
    assert record.ok


def test_cluster_options_refuse_what_cannot_run() -> None:
    for args, says in (
        (["soak", "--node-kills", "2"], "--node-kills needs a cluster"),
        (["run", "clean", "--cluster", "2"], "--cluster takes 1 (one server) or at least 3 nodes, not 2"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "paidtwice", *args], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 2, done.stderr
        assert says in done.stderr and "Traceback" not in done.stderr
