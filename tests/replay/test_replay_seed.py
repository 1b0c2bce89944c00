"""ctx.uuid(), ctx.random() and ctx.time() replay offline as on the server: journals recorded by the real
restate-server, replayed in-process with the seed paidtwice derives from the invocation id."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import DEADLINE, assert_eventually

from paidtwice._exceptions import UsageError
from paidtwice.lab import Lab
from paidtwice.replay import JournalFile, ReplayDivergence, Replayer, capture_journal
from paidtwice.targets import AgentHost, TargetSpec
from paidtwice.testing import assert_replays

AGENT_DIR = Path(__file__).parents[1] / "replay"
SERVICE = "Seeded"


@pytest.fixture(scope="module")
def seeded_journals(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> list[JournalFile]:
    """Three completed invocations of the seeded agent, each journal captured from the server."""
    env = {**os.environ, "PAIDTWICE_SEEDED_SERVICE": SERVICE}
    workdir = tmp_path_factory.mktemp("seeded")
    with AgentHost(
        target="seeded_agent:app", env=env, workdir=workdir, cwd=AGENT_DIR, forkserver=lab.forkserver
    ) as agent:
        agent.start()
        lab.admin.register_deployment(agent.uri)
        ids = [lab.ingress.send(SERVICE, "run", f"question {n}") for n in range(3)]

        def completed() -> bool:
            rows = lab.sql.invocations(ids)
            return len(rows) == len(ids) and all(row.status == "completed" for row in rows.values())

        assert_eventually(completed, timeout=60, what="the seeded invocations to complete")
        return [capture_journal(lab.sql, invocation_id) for invocation_id in ids]


@pytest.fixture(scope="module")
def replayer() -> Iterator[Replayer]:
    os.environ["PAIDTWICE_SEEDED_SERVICE"] = SERVICE
    with Replayer("seeded_agent:app", app_dir=AGENT_DIR) as running:
        yield running


def test_journals_of_the_real_server_replay_with_the_derived_seed(
    replayer: Replayer, seeded_journals: list[JournalFile]
) -> None:
    for journal in seeded_journals:
        # Commands: input, run timestamp, run step-<uuid>, output (which holds the uuid, draw and time).
        assert [e.type for e in journal.entries if e.type.startswith("Command")] == [
            "Command: Input",
            "Command: Run",
            "Command: Run",
            "Command: Output",
        ]
        result = replayer.replay_journal(journal)
        assert result.verdict == "replays", result
        assert "derived from the invocation id" in result.seed


def test_a_wrong_seed_diverges_where_the_uuid_names_the_step(
    replayer: Replayer, seeded_journals: list[JournalFile]
) -> None:
    journal = seeded_journals[0]
    assert journal.random_seed is not None
    wrong = dataclasses.replace(journal, random_seed=journal.random_seed + 1)
    with pytest.raises(ReplayDivergence) as raised:
        replayer.replay_journal(wrong)
    result = raised.value.result
    # The journal's entry 3 (Input 0, Run 1, its result 2): the SDK's command index 2.
    assert (result.verdict, result.index, result.command_index) == ("diverges", 3, 2)
    assert result.recorded == f"run {journal.entries[3].name}"
    assert result.attempted.startswith("run step-") and result.attempted != result.recorded


def test_an_unknown_seed_is_undecided_when_the_outcome_depends_on_it(
    replayer: Replayer, seeded_journals: list[JournalFile]
) -> None:
    journal = dataclasses.replace(seeded_journals[0], random_seed=None, random_seed_source="unknown: test")
    result = replayer.replay_journal(journal, raise_on_divergence=False)
    assert result.verdict == "undecided"
    assert "depends on the random seed" in result.message


def test_a_prefix_continues_and_its_next_step_never_runs(
    replayer: Replayer, seeded_journals: list[JournalFile]
) -> None:
    journal = seeded_journals[1]
    # Input, run timestamp and its result: the uuid-named step comes next, and is not executed.
    result = replayer.replay_journal(journal.prefix(2))
    assert result.verdict == "continues"
    assert result.next_command == f"run {journal.entries[3].name}"
    assert result.past_end == f"stopped before step '{journal.entries[3].name}' executed"


def test_a_batch_stops_each_sync_step_as_alone(
    replayer: Replayer, seeded_journals: list[JournalFile]
) -> None:
    # Side by side on one loop, a sync step past the end (held on an executor thread until its replay is
    # over) is stopped in each journal, and the whole journals still replay, each as it does alone.
    prefixes = [journal.prefix(2) for journal in seeded_journals]
    batch = [*prefixes, *seeded_journals] * 4
    alone = [replayer.replay_journal(journal, raise_on_divergence=False) for journal in batch]
    assert replayer.concurrency > 1
    assert replayer.replay_journals(batch) == alone
    assert [r.verdict for r in alone] == (["continues"] * 3 + ["replays"] * 3) * 4


def test_assert_replays_passes_and_fails(seeded_journals: list[JournalFile]) -> None:
    os.environ["PAIDTWICE_SEEDED_SERVICE"] = SERVICE
    results = assert_replays("seeded_agent:app", seeded_journals, app_dir=AGENT_DIR)
    assert [r.verdict for r in results] == ["replays"] * 3
    journal = seeded_journals[2]
    assert journal.random_seed is not None
    wrong = dataclasses.replace(journal, random_seed=journal.random_seed ^ 1)
    with pytest.raises(AssertionError, match="1 of 2 journal"):
        assert_replays("seeded_agent:app", [journal, wrong], app_dir=AGENT_DIR)


def test_assert_replays_takes_a_target(seeded_journals: list[JournalFile]) -> None:
    """The code a target runs (an app's, built as the sweep builds it) replays as the app named does; a
    command's target, whose code paidtwice cannot import, is refused in one line."""
    os.environ["PAIDTWICE_SEEDED_SERVICE"] = SERVICE
    target = TargetSpec(app="seeded_agent:app", app_dir=AGENT_DIR).code()
    results = assert_replays(target, seeded_journals)
    assert [r.verdict for r in results] == ["replays"] * 3
    with pytest.raises(UsageError, match="cannot be replayed offline"):
        assert_replays(TargetSpec(command="node agent.ts").code(), seeded_journals)
    with pytest.raises(UsageError, match="names its own directory"):
        assert_replays(target, seeded_journals, app_dir=AGENT_DIR)


def test_journal_save_and_capture_write_journal_files(
    lab: Lab, seeded_journals: list[JournalFile], tmp_path: Path
) -> None:
    import subprocess
    import sys

    from paidtwice.replay import load_journal

    def cli(*args: str) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "paidtwice", *args, "--admin-url", lab.server.admin_url],
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
        assert done.returncode == 0, done.stderr

    first = seeded_journals[0]
    cli("journal", first.invocation_id, "--save", str(tmp_path / "one.json"))
    saved = load_journal(tmp_path / "one.json")
    assert (saved.invocation_id, saved.entries, saved.random_seed) == (
        first.invocation_id,
        first.entries,
        first.random_seed,
    )
    cli("capture", str(tmp_path / "all"), "--service", SERVICE, "--status", "completed", "--last", "2")
    files = sorted((tmp_path / "all").glob("*.json"))
    assert len(files) == 2
    captured = {load_journal(path).invocation_id for path in files}
    assert captured <= {journal.invocation_id for journal in seeded_journals}
