"""The same on a 3-node cluster, in one short scenario: `watch`, given every node's admin URL, lists the
checkout agent's RT0016 loop priced, then paused; its metrics carry it and its pause hook ran once."""

from __future__ import annotations

import json
from pathlib import Path

from support import assert_eventually
from watch.labup import (
    PROFILE,
    lab_up,
    listed,
    live_entry,
    live_watch,
    metric,
    retrying_a_mismatch,
    wait_for_entry,
    wait_until_paused,
)


def test_watch_on_a_three_node_cluster(tmp_path: Path) -> None:
    with lab_up(tmp_path, "--cluster", "3") as lab, live_watch(lab, tmp_path) as watcher:
        port = watcher.metrics_port
        assert len(lab.admin_urls) == 3
        invocation_id = lab.send("timeout-cluster")
        retrying = wait_for_entry(
            live_entry(tmp_path, invocation_id),
            retrying_a_mismatch,
            what="the invocation listed retrying a journal mismatch",
        )
        assert retrying["mismatch"]["index"] == 1 and retrying["cost_per_attempt_usd"] > 0
        assert retrying["repaid_usd"] > 0
        wait_until_paused(port, "Checkout", "pay")
        poll = listed(lab, invocation_id, "--profile", str(PROFILE))
        wait_for_entry(poll, lambda e: e["state"] == "paused", what="the invocation listed paused")
        labels = {"service": "Checkout", "handler": "pay"}
        assert_eventually(
            lambda: metric(port, "paidtwice_paused_total", **labels) == 1.0, timeout=60, what="paused_total 1"
        )
        assert metric(port, "paidtwice_stuck_invocations", **labels, state="paused") == 1.0
        hooked = [json.loads(line) for line in (tmp_path / "hook.jsonl").read_text().splitlines() if line]
        assert [record["invocation_id"] for record in hooked] == [invocation_id]
        code, err = lab.stop()
        assert code == 0, err
