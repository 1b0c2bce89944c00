"""A Virtual Object served with lazy state and one with eager state, each reading its state (two keys and
the list of keys) around a journaled model call: every kill lands at its moment. A lazy read asks the
server, which journals its command and its completion before the handler goes on, so each read is a moment
of its own; an eager read is answered at once and reaches the journal with the next command."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from paidtwice.lab import Lab
from paidtwice.report._text import format_sweep
from paidtwice.sweep import Answers, sweep
from paidtwice.sweep._sweep import SweepMatrix
from paidtwice.targets import TargetSpec
from paidtwice.testing import assert_pays_once

AGENT = Path(__file__).resolve().parent / "state_agent"


@pytest.fixture(scope="module")
def swept(lab: Lab) -> Iterator[Future[list[SweepMatrix]]]:
    spec = TargetSpec(app="agent:app", input="Hello?", app_dir=AGENT)
    with ThreadPoolExecutor(max_workers=1) as pool:
        yield pool.submit(sweep, spec, answers=Answers(variations=("steady",)), lab=lab)


@pytest.fixture(scope="module")
def matrices(swept: Future[list[SweepMatrix]]) -> dict[str, SweepMatrix]:
    return {m.points[0].service: m for m in swept.result()}


def test_every_kill_around_lazy_state_reads_is_placed(matrices: dict[str, SweepMatrix]) -> None:
    matrix = matrices["LazyChat"]
    assert matrix.clean.journal[1:7] == (
        "Command: GetLazyState",
        "Notification: GetLazyState",
        "Command: GetLazyState",
        "Notification: GetLazyState",
        "Command: GetLazyStateKeys",
        "Notification: GetLazyStateKeys",
    ), matrix.clean.journal
    missed = [f"{p.crash_point}: {p.not_placed}" for p in matrix.points if not p.confirmed]
    assert not missed, format_sweep(matrix)
    # The moment after each read's completion, before the handler's next operation, is swept.
    reads = [p for p in matrix.points if "Notification: GetLazyState" in p.crash_point]
    assert len(reads) == 3, format_sweep(matrix)
    assert_pays_once([matrix])


def test_every_kill_around_eager_state_reads_is_placed(matrices: dict[str, SweepMatrix]) -> None:
    matrix = matrices["EagerChat"]
    assert any(label.startswith("Command: GetEagerState") for label in matrix.clean.journal)
    assert all(p.confirmed for p in matrix.points), format_sweep(matrix)
    assert_pays_once([matrix])
