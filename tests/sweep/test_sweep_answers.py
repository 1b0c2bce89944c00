"""What a script's answers can be, each in a sweep: several tool calls in one answer (in the OpenAI chat,
Responses and Anthropic formats), and HTTP errors (a 429 with Retry-After, a 500) that an agent's client
retries, or that fail the handler for Restate to retry; a scripted timeout, against a client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import preloading_forks, same_counts, swept_without_preload

from paidtwice.agent import framework_preload
from paidtwice.lab import Lab
from paidtwice.results import SweepMatrix
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._sweep import sweep_targets
from paidtwice.targets import AppTarget

AGENT = Path(__file__).resolve().parent / "tools_agent"
FORMATS = ("ChatTools", "ResponsesTools", "AnthropicTools")
FINAL = "Paris is sunny at 18 degrees; Rome is cloudy at 21."


@pytest.fixture(scope="module")
def tool_matrices(lab: Lab) -> dict[str, SweepMatrix]:
    targets = [
        AppTarget("agent:app", service, "ask", "Weather in Paris and Rome?", mode=service, cwd=str(AGENT))
        for service in FORMATS
    ]
    script = load_script_file(AGENT / "script.toml", "steady")
    return {m.mode: m for m in sweep_targets(lab, targets=targets, scripts=[("steady", script)])}


@pytest.mark.parametrize("service", FORMATS)
def test_one_answer_with_two_tool_calls_runs_both_tools(
    tool_matrices: dict[str, SweepMatrix], service: str
) -> None:
    matrix = tool_matrices[service]
    assert matrix.clean.answer == json.dumps(FINAL)
    assert matrix.clean.model_turns == (1, 2)
    # Both tools of the one answer ran, each once, each a journaled step.
    assert dict(matrix.clean.step_runs) == {"weather Paris": 1, "weather Rome": 1}
    assert [e for e in matrix.clean.journal if e.startswith("Command: Run")] == [
        "Command: Run weather Paris",
        "Command: Run weather Rome",
    ]
    names = [p.crash_point for p in matrix.points]
    assert "in flight: step weather Rome" in names, names
    for point in matrix.points:
        assert point.confirmed, point.crash_point
        assert point.status == "completed" and point.answer_matches, point.crash_point
    # The model calls are outside the journal: after the first answer came back, a kill pays it again.
    returned = [p for p in matrix.points if p.kind == "model-returned"]
    assert returned and all(p.extra_model_calls >= 1 for p in returned)


def test_the_clients_preload_changes_no_count(lab: Lab, tool_matrices: dict[str, SweepMatrix]) -> None:
    """The module's sweep forked each agent from a fork server that had imported the openai and anthropic
    clients (paidtwice.agent._preload); the Anthropic form swept again with the preload off, each agent
    importing them itself, counts the same, point for point (the OpenAI client is checked under each
    framework in test_sweep_frameworks.py)."""
    modules = framework_preload("agent:app", AGENT)
    assert modules == ("openai", "anthropic")
    assert preloading_forks(lab, modules, AGENT) > 0
    target = AppTarget(
        "agent:app", "AnthropicTools", "ask", "Weather in Paris and Rome?", mode="a", cwd=str(AGENT)
    )
    script = load_script_file(AGENT / "script.toml", "steady")
    (plain,) = swept_without_preload(
        lab, lambda: sweep_targets(lab, targets=[target], scripts=[("steady", script)])
    )
    same_counts(plain, tool_matrices["AnthropicTools"])


GEMINI = ("GeminiTools", "GeminiStreamed")


@pytest.fixture(scope="module")
def gemini_matrices(lab: Lab) -> dict[str, SweepMatrix]:
    targets = [
        AppTarget(
            "gemini_agent:app", service, "ask", "Weather in Paris and Rome?", mode=service, cwd=str(AGENT)
        )
        for service in GEMINI
    ]
    script = load_script_file(AGENT / "script.toml", "steady")
    return {m.mode: m for m in sweep_targets(lab, targets=targets, scripts=[("steady", script)])}


@pytest.mark.parametrize("service", GEMINI)
def test_a_gemini_agent_is_swept_whole_and_streamed(
    gemini_matrices: dict[str, SweepMatrix], service: str
) -> None:
    # google-genai, pointed at the stub by GOOGLE_GEMINI_BASE_URL: two tools in one answer, then the text.
    matrix = gemini_matrices[service]
    assert matrix.clean.answer == json.dumps(FINAL)
    assert matrix.clean.model_turns == (1, 2)
    assert dict(matrix.clean.step_runs) == {"weather Paris": 1, "weather Rome": 1}
    kinds = [p.kind for p in matrix.points]
    assert kinds.count("in-flight-model") == 2, kinds
    for point in matrix.points:
        assert point.confirmed, point.crash_point
        assert point.status == "completed" and point.answer_matches, point.crash_point
    returned = [p for p in matrix.points if p.kind == "model-returned"]
    assert returned and all(p.extra_model_calls >= 1 for p in returned)


@pytest.fixture(scope="module")
def error_matrices(lab: Lab) -> dict[str, SweepMatrix]:
    targets = [
        AppTarget("errors_agent:app", service, "ask", "Weather?", mode=service, cwd=str(AGENT))
        for service in ("Retrying", "Failing")
    ]
    script = load_script_file(AGENT / "errors.toml", "steady")
    return {m.mode: m for m in sweep_targets(lab, targets=targets, scripts=[("steady", script)])}


def test_a_client_that_retries_errors_is_swept_through_them(error_matrices: dict[str, SweepMatrix]) -> None:
    matrix = error_matrices["Retrying"]
    # The 429 and the 500, each retried by the client, then the answer.
    assert matrix.clean.model_calls == 3
    assert matrix.clean.answer == json.dumps("IT IS SUNNY IN PARIS.")
    names = [p.crash_point for p in matrix.points]
    assert "in flight: model call 3" in names, names
    for point in matrix.points:
        assert point.confirmed, point.crash_point
        assert point.status == "completed" and point.answer_matches, point.crash_point


def test_a_handler_that_fails_on_an_error_is_retried_by_restate(
    error_matrices: dict[str, SweepMatrix],
) -> None:
    matrix = error_matrices["Failing"]
    # Each error fails the attempt; Restate's retries ask again until the model answers.
    assert matrix.clean.model_calls == 3
    assert matrix.clean.answer == json.dumps("IT IS SUNNY IN PARIS.")
    for point in matrix.points:
        assert point.status == "completed" and point.answer_matches, point.crash_point
