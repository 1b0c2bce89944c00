"""The TypeScript SDK's onJournalMismatchErrors on the pinned restate-server: 'pause' beside 'retry' under the
changed stub, with protocol v7 and without it, each run on a server of its own. Measured, never assumed."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from paidtwice.cli import cli
from paidtwice.deck import Comparison, Deck, experiment_by_name
from paidtwice.lab import Lab
from paidtwice.report._text import format_comparison
from paidtwice.results import ComparisonRecord

ROW = "ts-changed-pause-on-mismatch"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compared(lab: Lab) -> ComparisonRecord:
    (record,) = Deck(lab).run_rows([experiment_by_name(ROW)])
    assert isinstance(record, ComparisonRecord)
    return record


def test_pause_stops_the_loop_at_the_first_mismatch_only_on_protocol_v7(compared: ComparisonRecord) -> None:
    retry, pause, ignored = compared.runs
    assert (retry.protocol_version, pause.protocol_version, ignored.protocol_version) == (7, 7, 6)
    assert pause.server_flags == retry.server_flags == ("RESTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7=true",)
    assert ignored.server_flags == ()
    # 'pause': the first replay meets RT0016 and the invocation pauses at once, its policy unspent.
    assert (pause.status, pause.model_calls, pause.mismatches) == ("paused", 2, 1)
    assert pause.attempts == 2 + pause.attempts_while_down < 20
    # 'retry', and a 'pause' the server does not honour: every retry the agent sees is paid, to the end.
    for run in (retry, ignored):
        assert run.status == "paused" and run.attempts == 20
        assert run.model_calls == 1 + run.mismatches == 20 - run.attempts_while_down
    assert pause.cost_usd < retry.cost_usd
    assert compared.difference == retry.model_calls - pause.model_calls
    assert compared.checks[0].ok and compared.matches


def test_recover_offers_a_resume_that_will_mismatch_again_for_the_paused_one(
    compared: ComparisonRecord,
) -> None:
    pause = compared.runs[1]
    names = [offer.split(":", 1)[0] for offer in pause.recover_offers]
    assert names[:2] == ["resume", "restart"] and names[-1] == "kill"
    assert "RT0016" in pause.recover_offers[0] and "mismatch again" in pause.recover_offers[0]
    text = format_comparison(compared)
    assert "ts-changed-pause-v7: protocol 7 (RESTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7=true)" in text
    assert "recover offers resume:" in text


def test_the_row_is_listed_and_the_agent_reads_the_option() -> None:
    done = CliRunner().invoke(cli, ["experiments"])
    assert done.exit_code == 0 and ROW in done.output
    row = experiment_by_name(ROW)
    assert isinstance(row, Comparison)
    assert [dict(run.command_env)["ON_JOURNAL_MISMATCH"] for run in row.runs()] == ["retry", "pause", "pause"]
    agent = (ROOT / row.first.command_dir / "agent.ts").read_text()
    assert "onJournalMismatchErrors: onMismatch" in agent and "process.env.ON_JOURNAL_MISMATCH" in agent
