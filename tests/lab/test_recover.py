"""Getting a stuck invocation out: the deck's walk, `recover`'s priced ways out, and a prefix restart."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import pytest
from genai_prices import Usage, calc_price

from paidtwice.deck import CURVES, SCENARIOS, WALKS, Deck, Experiment
from paidtwice.lab import Lab
from paidtwice.recover import apply_way, explain, plan_recovery
from paidtwice.report import format_walk
from paidtwice.results import RecoveryRecord, RunRecord
from paidtwice.targets import DeckTarget


@dataclass(frozen=True)
class Stuck:
    walk: RecoveryRecord
    model_down: RunRecord


def fast_retries() -> Experiment:
    """The retry-policy curve's 20-attempt pause point: the deck's changed-for-good run under the same 20
    attempts, backing off 100 ms doubling to 400 ms (about 8 s to its pause, not the deck's 33)."""
    curve = next(c for c in CURVES if c.name == "retry-policy-curve")
    (row,) = [
        row
        for row, _ in curve.points()
        if row.retry_policy is not None and row.retry_policy.max_attempts == 20
        if row.retry_policy.on_max_attempts == "pause"
    ]
    return row


@pytest.fixture(scope="module")
def stuck(lab: Lab) -> Stuck:
    """The deck's walk and a journaled run paused by a failing model, made at the same time. Both only need
    an invocation paused by its policy, however long it backed off first: each runs under the retry-policy
    curve's 20-attempt pause policy (the deck's 20 attempts, a shorter backoff). Neither checks a figure the
    backoff changes (the walk checks its steps; the paused run its first answer and tool result kept)."""
    base = fast_retries()
    walk_row = replace(WALKS[0], base=base)
    down = next(row for row in SCENARIOS if row.name == "journaled-model-down")
    deck = Deck(lab)
    with ThreadPoolExecutor(max_workers=2) as pool:
        walk = pool.submit(deck.run_walk, walk_row)
        model_down = pool.submit(deck.run, replace(down, retry_policy=base.retry_policy))
        return Stuck(walk.result(), model_down.result())


def test_walk_resume_on_fix_is_accepted_then_mismatches_at_index_one(stuck: Stuck) -> None:
    resume = stuck.walk.steps[1]
    assert resume.status == 200
    assert resume.model_calls == 0  # the fix mismatches before it reaches its model step
    mismatch = stuck.walk.mismatch
    assert mismatch is not None
    assert (mismatch.index, mismatch.recorded, mismatch.attempted) == (1, "run weather", "run model")
    assert "name: weather != model" in mismatch.message


def test_walk_restart_refused_while_paused_then_completes_after_kill(stuck: Stuck) -> None:
    by_action = {step.action: step for step in stuck.walk.steps}
    assert by_action["restart-as-new while paused"].status == 409
    assert by_action["kill"].status == 200
    restarted = by_action["restart-as-new after the kill"]
    assert restarted.status == 200
    assert (restarted.model_calls, restarted.tool_calls) == (2, 1)
    assert restarted.invocation_id != stuck.walk.invocation_id
    statuses = [(call.path.rsplit("/", 1)[-1].split("?")[0], call.status) for call in stuck.walk.admin_log]
    assert statuses[-3:] == [("restart-as-new", 409), ("kill", 200), ("restart-as-new", 200)]
    assert stuck.walk.matches


def test_explain_reads_both_message_forms_from_real_runs(
    lab: Lab, stuck: Stuck, deck_records: dict[str, RunRecord]
) -> None:
    operation = explain(lab.sql, deck_records["naive-changed-for-good"].invocation_id)
    assert operation.mismatch is not None and operation.code == "RT0016"
    assert (operation.mismatch.recorded, operation.mismatch.attempted) == ("run weather", "handler return")
    assert "sys_journal_events" in operation.source
    difference = explain(lab.sql, stuck.walk.invocation_id)
    assert difference.mismatch is not None
    assert (difference.mismatch.recorded, difference.mismatch.attempted) == ("run weather", "run model")


def test_recover_lists_priced_ways_out_of_a_paused_invocation(
    lab: Lab, deck_records: dict[str, RunRecord]
) -> None:
    paused = deck_records["naive-changed-for-good"].invocation_id
    plan = plan_recovery(lab.sql, paused)
    ways = {way.name: way for way in plan.ways}
    assert {"resume", "restart", "kill"} <= set(ways)
    assert "weather runs again" in ways["restart"].runs_again
    assert "RT0016 at entry 1 (command index 1)" in ways["resume"].replay
    assert ways["resume"].certain_mismatch_at is None


def test_recover_flags_a_resume_onto_code_whose_first_steps_differ(stuck: Stuck) -> None:
    # Before resuming, the walk ran the fix once and asked recover; the resume then mismatched there.
    probe = stuck.walk.steps[0]
    assert probe.model_calls == 2
    assert "CERTAIN MISMATCH at entry 1 (command index 1)" in probe.outcome
    assert stuck.walk.predicted_mismatch_at == 1
    assert stuck.walk.mismatch is not None and stuck.walk.mismatch.index == 1


def test_restart_from_a_completed_prefix_keeps_the_answer_and_the_tool_result(lab: Lab, stuck: Stuck) -> None:
    run = stuck.model_down
    assert run.status == "paused"
    assert run.tool_calls == 1
    lane = lab.stub.lane(run.lane)
    assert lane is not None
    lane.model_up = True
    # The run's agent is gone with its run; the same code comes back as a new deployment.
    back = DeckTarget("journaled", pause=None)
    agent, _trace = lab.launch(back, lane, run.service, workdir=lab.workdir / run.service / "back")
    with agent:
        agent.start()
        deployment = lab.admin.register_deployment(agent.uri)
        plan = plan_recovery(lab.sql, run.invocation_id, deployment=deployment.id)
        prefix = next(way for way in plan.ways if way.name.startswith("restart-from:"))
        assert prefix.name == "restart-from:6"
        assert prefix.runs_again == ("model runs again",)
        result = apply_way(lab.admin, lab.sql, plan, prefix.name)
    assert result.status == "completed", result.failure
    new_calls = lane.model_calls(result.invocation_id)
    assert [(call.turn, call.ask) for call in new_calls] == [(2, 1)]  # the first answer was kept
    assert lane.tool_runs(result.invocation_id) == []  # so was the tool's result
    assert result.steps_run_again == ("model",)


def test_walk_steps_are_priced_from_the_ledger(lab: Lab, stuck: Stuck) -> None:
    """Each step that made model calls on a fresh invocation (the probe, the restart) costs those calls,
    priced here with genai-prices directly; the walk's total is its steps'."""
    walk = stuck.walk
    assert walk.price_model == lab.price_model and walk.prices_as_of == walk.stuck_run.prices_as_of
    probe, restarted = walk.steps[0], walk.steps[-1]
    for step in (probe, restarted):
        calls = lab.stub.ledger.model_calls(walk.stuck_run.lane, step.invocation_id)
        assert len(calls) == step.model_calls > 0
        priced = 0.0
        for call in calls:
            assert call.billed is not None
            usage = Usage(input_tokens=call.billed.prompt_tokens, output_tokens=call.billed.completion_tokens)
            priced += float(
                calc_price(
                    usage,
                    walk.price_model,
                    genai_request_timestamp=datetime.fromtimestamp(call.started, UTC),
                ).total_price
            )
        assert step.cost_usd == pytest.approx(priced, abs=1e-12) and step.cost_usd > 0
        assert step.usage.prompt_tokens == sum(c.billed.prompt_tokens for c in calls if c.billed)
    assert walk.steps[1].model_calls == 0 and walk.steps[1].cost_usd == 0
    assert walk.cost_usd == pytest.approx(sum(step.cost_usd for step in walk.steps), abs=1e-12)
    assert walk.usage.total_tokens == sum(step.usage.total_tokens for step in walk.steps)
    assert f"the walk paid ${walk.cost_usd:.6f} at {walk.price_model}" in format_walk(walk)
