"""The crash-point sweep of the deck's agent, on the session's real server: what each kill costs."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from paidtwice._words import count
from paidtwice.lab import Lab
from paidtwice.sweep._options import Answers, KillPlan
from paidtwice.sweep._sweep import PointResult, SweepMatrix, sweep
from paidtwice.targets import TargetSpec
from paidtwice.testing import assert_pays_once


@pytest.fixture(scope="module")
def matrices(lab: Lab) -> dict[tuple[str, str], SweepMatrix]:
    swept = sweep(
        TargetSpec(modes=("naive", "journaled")),
        answers=Answers(variations=("steady", "drifting", "changed")),
        # 32 at a time (63 points): naive/changed's replays after the tool mismatch until the agent's retry
        # policy pauses them (about 40 s), and with the default 16 they waited for a place.
        kills=KillPlan(parallel=32),
        lab=lab,
    )
    return {(m.mode, m.script): m for m in swept}


def weather_runs(point: PointResult) -> int:
    return dict(point.step_runs).get("weather", 0)


def test_every_kill_landed_where_its_point_says(matrices: dict[tuple[str, str], SweepMatrix]) -> None:
    assert len(matrices) == 6
    for matrix in matrices.values():
        kinds = {p.kind for p in matrix.points}
        assert {"after-entry", "in-flight-model", "in-flight-step", "pause"} <= kinds
        assert [p.order for p in matrix.points] == list(range(1, len(matrix.points) + 1))
        assert all(p.confirmed for p in matrix.points), [
            p.crash_point for p in matrix.points if not p.confirmed
        ]


@pytest.mark.parametrize("script", ["steady", "drifting", "changed"])
def test_journaled_pays_again_only_for_a_model_call_in_flight(
    matrices: dict[tuple[str, str], SweepMatrix], script: str
) -> None:
    for point in matrices[("journaled", script)].points:
        in_flight = point.kind == "in-flight-model"
        assert point.model_calls_in_flight == (1 if in_flight else 0), point.crash_point
        assert point.mismatches == 0, point.crash_point
        assert point.status == "completed", point.crash_point
        if in_flight and script == "changed" and point.crash_point.endswith("model call 1"):
            # `changed` answers turn 1 directly when asked again: one call paid for nothing, one saved.
            assert point.extra_model_calls == 0 and not point.answer_matches, point.crash_point
            continue
        assert point.extra_model_calls == (1 if in_flight else 0), point.crash_point
        # Only a call cut off in flight is asked again; under `drifting` its words (the answer) differ.
        if not in_flight or script != "drifting":
            assert point.answer_matches, point.crash_point


@pytest.mark.parametrize("script", ["steady", "drifting"])
def test_naive_pays_again_at_every_point_after_the_first_answer(
    matrices: dict[tuple[str, str], SweepMatrix], script: str
) -> None:
    points = matrices[("naive", script)].points
    first_returned = next(p.order for p in points if p.kind == "model-returned")
    for point in points:
        if point.order >= first_returned:
            assert point.extra_model_calls >= 1, point.crash_point
        elif point.kind != "in-flight-model":
            assert point.extra_model_calls == 0, point.crash_point
        assert point.status == "completed", point.crash_point


@pytest.mark.parametrize("mode", ["naive", "journaled"])
def test_the_tool_runs_once_except_in_flight_inside_it(
    matrices: dict[tuple[str, str], SweepMatrix], mode: str
) -> None:
    for point in matrices[(mode, "steady")].points:
        in_tool = point.kind == "in-flight-step" and point.crash_point.endswith("weather")
        assert weather_runs(point) == (2 if in_tool else 1), point.crash_point
        assert point.tool_runs == weather_runs(point), point.crash_point


def test_naive_under_changed_pauses_once_the_tool_is_journaled(
    matrices: dict[tuple[str, str], SweepMatrix],
) -> None:
    matrix = matrices[("naive", "changed")]
    tool_command = matrix.clean.journal.index("Command: Run weather") + 1  # entries once it is journaled
    asked = False
    for point in matrix.points:
        if point.journal_at_kill >= tool_command:
            assert point.status == "paused" and point.mismatches >= 1, point.crash_point
        elif asked or point.kind == "in-flight-model":
            # The replay asks turn 1 again and is answered differently: no tool, another answer.
            assert point.status == "completed" and not point.answer_matches, point.crash_point
        else:
            assert point.status == "completed" and point.answer_matches, point.crash_point
        asked = asked or point.kind in ("in-flight-model", "model-returned")
    assert any(p.status == "paused" for p in matrix.points)
    assert any(p.status == "completed" and not p.answer_matches for p in matrix.points)


def test_summary_counts_what_was_paid_again(matrices: dict[tuple[str, str], SweepMatrix]) -> None:
    naive = matrices[("naive", "steady")]
    # Two counts from the stub's ledger: the invocation's calls against the clean run's, and the calls made
    # after the kill for a turn that had been answered before it. Under `steady` they must agree.
    outside = sum(p.extra_model_calls - p.model_calls_in_flight for p in naive.points)
    assert outside > 0
    assert sum(p.answers_asked_again for p in naive.points) == outside
    summary = "\n".join(naive.summary())
    assert f"paid again: {count(outside, 'model answer')} asked for again outside the journal" in summary
    assert naive.clean.journaled_model_calls == 0
    assert "no model call is journaled in this agent" in summary
    journaled = matrices[("journaled", "steady")]
    assert journaled.clean.journaled_model_calls == journaled.clean.model_calls
    answered = [p for p in journaled.points if p.model_answers_at_kill]
    # Only points after an answer came back count; the points before the first answer are not among them.
    assert 0 < len(answered) < len(journaled.points)
    summary = "\n".join(journaled.summary())
    assert "paid again: 0 model answers asked for again outside the journal" in summary
    assert f"journaled model answers at {len(answered)}/{len(answered)} points where an answer" in summary


def test_pytest_helper_fails_on_paying_twice_and_passes_when_journaled(
    matrices: dict[tuple[str, str], SweepMatrix],
) -> None:
    journaled = [m for (mode, _), m in matrices.items() if mode == "journaled"]
    assert_pays_once(journaled)
    with pytest.raises(AssertionError, match=r"paid twice at \d+ crash point"):
        assert_pays_once([matrices[("naive", "steady")]])
    with pytest.raises(AssertionError, match="in flight: model call 1"):
        assert_pays_once(journaled, allow_in_flight=False)


def test_the_lab_fixture_is_a_registered_pytest_plugin() -> None:
    plugins = {e.name: e.value for e in entry_points(group="pytest11")}
    assert plugins.get("paidtwice") == "paidtwice.testing"


@pytest.mark.parametrize("script", ["steady", "drifting"])
def test_expected_crash_cost_journaled_only_from_calls_in_flight_and_naive_higher(
    matrices: dict[tuple[str, str], SweepMatrix], script: str
) -> None:
    naive, journaled = matrices[("naive", script)], matrices[("journaled", script)]
    for matrix in (naive, journaled):
        assert sum(p.covers for p in matrix.points) == pytest.approx(1.0, abs=1e-6)
        assert matrix.expected_crash_cost_usd == pytest.approx(
            sum(p.covers * p.extra_cost_usd for p in matrix.points)
        )
        for point in matrix.points:
            assert 0 <= point.extra_cost_usd <= point.cost_usd, point.crash_point
            if script == "steady":  # the same answers as the clean run's: the extra is the difference
                assert point.extra_cost_usd == pytest.approx(point.cost_usd - matrix.clean.cost_usd)
    from_flight = sum(p.covers * p.extra_cost_usd for p in journaled.points if p.kind == "in-flight-model")
    assert journaled.expected_crash_cost_usd == pytest.approx(from_flight, abs=1e-12)
    assert journaled.expected_crash_cost_usd > 0
    assert naive.expected_crash_cost_usd > journaled.expected_crash_cost_usd
    assert journaled.cost_per_thousand(5) == pytest.approx(5 * journaled.expected_crash_cost_usd)


def test_a_point_killed_mid_call_pays_the_prompt_and_what_was_generated(
    matrices: dict[tuple[str, str], SweepMatrix],
) -> None:
    """The call cut off in flight is billed as providers bill a dropped request: its whole prompt (the same
    prompt its turn is asked with again), plus the completion written until the caller left (the stub holds
    the call a minute; the kill comes far sooner, so only a sliver of the answer)."""
    points = [p for p in matrices[("journaled", "steady")].points if p.kind == "in-flight-model"]
    assert points
    for point in points:
        cut = [line for line in point.model_log if line.delivered is False]
        assert len(cut) == 1, point.crash_point
        (line,) = cut
        again = next(a for a in point.model_log if a.turn == line.turn and a.delivered)
        assert line.finished is not None and line.extra and not again.extra
        assert line.usage.prompt_tokens == again.usage.prompt_tokens > 0
        assert line.usage.completion_tokens < again.usage.completion_tokens
        assert 0 < line.cost_usd < again.cost_usd
        assert point.extra_cost_usd == pytest.approx(line.cost_usd, abs=1e-12)
