"""Helpers shared by the tests: running paidtwice as a user does, polling with a deadline, and what /proc says
about processes."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from paidtwice.sweep import Shard

LOOPBACK = "0100007F"  # 127.0.0.1 as /proc/net/tcp writes it

DEADLINE_VARIABLE = "PAIDTWICE_TEST_DEADLINE"


def _deadline() -> float:
    given = os.environ.get(DEADLINE_VARIABLE, "").strip()
    return float(given) if given else 1800.0


DEADLINE = _deadline()
"""Seconds a test waits for a process it started (a command, a script, a lab) before calling it hung:
`PAIDTWICE_TEST_DEADLINE`, or 30 minutes. A guard against a hang, never a speed target: the fixed 60 to
120 s each call once had tripped on a loaded CI machine while the command was only slow."""


def run_paidtwice(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m paidtwice ARGS` as a user runs it, its output captured as text: this environment
    (unbuffered) plus `env`, waited for until the `DEADLINE`."""
    return subprocess.run(
        [sys.executable, "-m", "paidtwice", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        timeout=DEADLINE,
    )


def assert_eventually(condition: Callable[[], bool], *, timeout: float = 30.0, what: str = "") -> None:
    """Poll `condition` until it holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what or condition}")
        time.sleep(0.02)


def _stat(pid: int | str) -> list[str]:
    """The fields of /proc/PID/stat after the command name: state, parent, process group, ..."""
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()


def _live() -> dict[int, list[str]]:
    """Every live (not zombie) process's stat fields, by pid."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = _stat(entry)
        except OSError:
            continue
        if fields[0] != "Z":
            found[int(entry)] = fields
    return found


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        return _stat(pid)[0] != "Z"
    except OSError:
        return False


def pids_in_group(pgid: int) -> list[int]:
    """Live processes of the process group `pgid`."""
    return [pid for pid, fields in _live().items() if int(fields[2]) == pgid]


def _children() -> dict[int, list[int]]:
    """Live processes by parent."""
    children: dict[int, list[int]] = {}
    for pid, fields in _live().items():
        children.setdefault(int(fields[1]), []).append(pid)
    return children


def descendants(pid: int) -> set[int]:
    """Every live process below `pid`, found by parent links."""
    children = _children()
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def grandchildren(pid: int) -> set[int]:
    """Processes started by the processes `pid` started: the agents its fork server forked."""
    children = _children()
    return {grandchild for child in children.get(pid, []) for grandchild in children.get(child, [])}


def listening_addresses(pid: int) -> set[str]:
    """Local addresses of the TCP sockets `pid` listens on."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            parts = line.split()
            if parts[3] == "0A" and parts[9] in inodes:  # 0A: LISTEN
                found.add(parts[1])
    return found


def temp_dirs_in_use(pids: Iterable[int]) -> set[Path]:
    """The lab's directories under the temp dir (`paidtwice-lab-*`, `paidtwice-restate-*`,
    `paidtwice-cluster-*`) that these processes hold files open in. The shared port locks
    (`paidtwice-ports`) go when the last lease of any lab is released, not with one lab."""
    root = Path(tempfile.gettempdir())
    found = set()
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = Path(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:
                continue
            if target.is_relative_to(root) and target != root:
                top = root / target.relative_to(root).parts[0]
                if top.name.startswith(("paidtwice-lab-", "paidtwice-restate-", "paidtwice-cluster-")):
                    found.add(top)
    return found


def swept_without_preload(lab: Any, sweep: Callable[[], list[Any]]) -> list[Any]:
    """`sweep()` run with the lab's framework preload off (each agent imports its framework itself); no
    preloading fork server forks anything meanwhile."""
    forks = {key: server.forks for key, server in lab._preloading.items()}  # noqa: SLF001
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lab, "preload", False)
        swept = sweep()
    assert {key: server.forks for key, server in lab._preloading.items()} == forks  # noqa: SLF001
    return swept


def preloading_forks(lab: Any, modules: tuple[str, ...], cwd: Path) -> int:
    """How many agents the lab's fork server preloading `modules` in `cwd` has forked (it must be one), once
    its log shows it imported every one of them (it says which it could not, and forks all the same)."""
    (server,) = [s for key, s in lab._preloading.items() if key[:2] == (modules, str(cwd))]  # noqa: SLF001
    log = Path(server.log_path).read_text(errors="replace")
    assert "not preloaded" not in log, log
    return int(server.forks)


def covering_shards(matrices: Sequence[Any]) -> list[Shard]:
    """The shares (K, N) to sweep these matrices' targets in again (swept together, in this order, once per
    share) so that the points swept hold a point of every kind (after-entry, model-returned, in flight in a
    model call, in a step, ...) that each matrix has, with the fewest agent starts: one share, or two when
    no one share holds every kind. A share holds every N-th point of each matrix
    (`paidtwice.sweep.shard_of` deals the points of every matrix in turn), so a plan whose kinds recur
    with a period (after-entry, after-entry, in flight...) may have no single share that holds them all.
    A point starts two agents (the one killed, the one that recovers), each sweep's clean run one per
    matrix."""
    from paidtwice.sweep import shard_of  # here: most tests that import this module sweep nothing

    jobs = [(i, point.kind) for i, matrix in enumerate(matrices) for point in matrix.points]
    kinds = set(jobs)
    shares = [(k, n) for n in range(1, len(jobs) + 1) for k in range(1, n + 1)]
    held = {share: frozenset(shard_of(jobs, share)) for share in shares}
    size = {share: len(shard_of(jobs, share)) for share in shares}
    options = [[s] for s in shares] + [[s, t] for i, s in enumerate(shares) for t in shares[i + 1 :]]
    covering = [option for option in options if frozenset().union(*(held[s] for s in option)) == kinds]
    # (1, 1), the whole sweep, always covers.
    return min(covering, key=lambda option: len(option) * len(matrices) + 2 * sum(size[s] for s in option))


def in_share(matrices: Sequence[Any], shard: Shard) -> list[Any]:
    """The matrices (SweepMatrix) with only the points of the share `shard` of their sweep: the points a
    sweep of the same targets with `KillPlan(shard=shard)` runs, dealt as `paidtwice.sweep.shard_of` deals
    them."""
    from paidtwice.sweep import shard_of

    jobs = [(i, point) for i, matrix in enumerate(matrices) for point in matrix.points]
    share = shard_of(jobs, shard)
    return [
        dataclasses.replace(matrix, points=tuple(point for j, point in share if j == i))
        for i, matrix in enumerate(matrices)
    ]


def compared_without_preload(
    lab: Any, preloaded: Sequence[Any], sweep: Callable[[Any], list[Any]]
) -> list[list[tuple[Any, Any]]]:
    """The targets of the `preloaded` matrices swept again with the preload off (`swept_without_preload`),
    `sweep(kills)` once for each of the `covering_shards`: for each matrix, a (matrix without the preload,
    the same points of the preloaded one) for each of those sweeps, for `assert_same_counts`."""
    from paidtwice.sweep import KillPlan

    compared: list[list[tuple[Any, Any]]] = [[] for _ in preloaded]
    for shard in covering_shards(preloaded):
        plain = swept_without_preload(lab, lambda shard=shard: sweep(KillPlan(shard=shard)))
        for pairs, ours, same in zip(compared, plain, in_share(preloaded, shard), strict=True):
            pairs.append((ours, same))
    return compared


def assert_same_counts(compared: list[tuple[Any, Any]], preloaded: Any) -> None:
    """Each (swept without the preload, the same points swept with it) of one target counts the same
    (`same_counts`), and together they hold a point of every kind the preloaded sweep has."""
    assert {p.kind for _, same in compared for p in same.points} == {p.kind for p in preloaded.points}
    for plain, same in compared:
        same_counts(plain, same)


def same_counts(plain: Any, preloaded: Any) -> None:
    """Two sweeps of one target (SweepMatrix) count the same: the clean run's calls, steps, journal and
    answer, and every point's kind, landing, status and extra calls and steps, point for point."""
    clean = ("model_calls", "journaled_model_calls", "step_runs", "journal", "answer")
    assert [getattr(plain.clean, f) for f in clean] == [getattr(preloaded.clean, f) for f in clean]
    fields = (
        "crash_point",
        "kind",
        "confirmed",
        "status",
        "answer_matches",
        "model_calls",
        "extra_model_calls",
        "model_calls_in_flight",
        "step_runs",
        "extra_step_runs",
        "steps_in_flight",
        "mismatches",
    )
    assert [[getattr(p, f) for f in fields] for p in plain.points] == [
        [getattr(p, f) for f in fields] for p in preloaded.points
    ]


POINT_COUNTS = (
    "crash_point", "order", "kind", "status", "answer_matches", "answer", "model_calls", "extra_model_calls",
    "model_calls_in_flight", "model_answers_at_kill", "answers_asked_again", "step_runs", "extra_step_runs",
    "steps_in_flight", "tool_runs", "mismatches", "journal_at_kill", "confirmed", "not_placed", "unanswered",
    "extra_cost_usd",
)  # fmt: skip
"""What a point's record says about what it paid (its ids, times and logs differ from run to run)."""


def point_counts(point: Any) -> tuple[Any, ...]:
    """A point's record as `POINT_COUNTS` names it: what two sweeps of the same plan must agree on."""
    return tuple(getattr(point, name) for name in POINT_COUNTS)
