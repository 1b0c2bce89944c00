"""One real restate-server and one stub for the whole test session; each test makes its own invocations."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from paidtwice.lab import EXPERIMENTS, Lab, RunRecord


@pytest.fixture(scope="session")
def lab() -> Iterator[Lab]:
    with Lab(echo=lambda message: None) as running:
        yield running


@pytest.fixture(scope="session")
def deck_records(lab: Lab) -> dict[str, RunRecord]:
    """Every plain row of the deck, run once, concurrently, on the shared server. The node kill needs a
    cluster: it runs on `cluster_lab`, in test_cluster.py."""
    rows = [row for row in EXPERIMENTS if row.fault.kind != "node-kill-in-pause"]
    records = lab.run_many([(row, None) for row in rows], concurrent=True)
    return {record.name: record for record in records}


@pytest.fixture(scope="session")
def cluster_lab() -> Iterator[Lab]:
    """One real 3-node Restate cluster and its own stub for the whole session; its tests kill its nodes."""
    with Lab(echo=lambda message: None, cluster=3) as running:
        yield running
