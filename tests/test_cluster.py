"""The lab on a real 3-node Restate cluster: a node killed under a run, and under load."""

from __future__ import annotations

from paidtwice.engine import RestateCluster
from paidtwice.lab import CLEAN_JOURNALED_JOURNAL, Lab, experiment_by_name
from paidtwice.lab._experiments import Experiment


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
    assert kill.node_back_after is not None
    cluster = cluster_lab.server
    assert isinstance(cluster, RestateCluster)
    # The killed node was started again on its data.
    assert len(cluster.live_nodes()) == 3
