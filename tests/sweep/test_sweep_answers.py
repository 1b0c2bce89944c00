"""What a script's answers can be, each in a sweep: several tool calls in one answer (in the OpenAI chat,
Responses, Anthropic and Gemini formats), and HTTP errors (a 429 with Retry-After, a 500) that an agent's
client retries, or that fail the handler for Restate to retry; a scripted timeout, against a client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import assert_same_counts, compared_without_preload, preloading_forks

from paidtwice.agent import framework_preload
from paidtwice.lab import Lab
from paidtwice.results import SweepMatrix
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._sweep import sweep_targets
from paidtwice.targets import AppTarget

AGENT = Path(__file__).resolve().parent / "tools_agent"
FORMATS = ("ChatTools", "ResponsesTools", "AnthropicTools")
FINAL = "Paris is sunny at 18 degrees; Rome is cloudy at 21."


GEMINI = ("GeminiTools", "GeminiStreamed")


@pytest.fixture(scope="module")
def matrices(lab: Lab) -> dict[str, SweepMatrix]:
    """The tools agent in each client's format (OpenAI chat, Responses, Anthropic, Gemini whole and
    streamed), swept at once under one script."""
    targets = [
        AppTarget(f"{app}:app", service, "ask", "Weather in Paris and Rome?", mode=service, cwd=str(AGENT))
        for app, services in (("agent", FORMATS), ("gemini_agent", GEMINI))
        for service in services
    ]
    script = load_script_file(AGENT / "script.toml", "steady")
    return {m.mode: m for m in sweep_targets(lab, targets=targets, scripts=[("steady", script)])}


@pytest.mark.parametrize("service", FORMATS)
def test_one_answer_with_two_tool_calls_runs_both_tools(
    matrices: dict[str, SweepMatrix], service: str
) -> None:
    matrix = matrices[service]
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


COMPARED = (("agent:app", "AnthropicTools"), ("gemini_agent:app", "GeminiTools"))


def test_the_clients_preload_changes_no_count(lab: Lab, matrices: dict[str, SweepMatrix]) -> None:
    """The module's sweep forked each agent from a fork server that had imported its model clients
    (paidtwice.agent._preload: openai and anthropic, or google-genai); the Anthropic and the Gemini forms
    swept again with the preload off, each agent importing them itself, count the same: their clean runs,
    and point for point the points of the shares `covering_shards` picks, the fewest that still hold
    every kind of point each form has (after an entry, after a model answer, in flight in a model call, in
    a step). That is enough: the preload changes how each agent starts, the same at every start; the clean
    run and each way a restarted agent recovers (each kind of point) are compared. The OpenAI client is
    also checked under each framework in test_sweep_frameworks.py."""
    assert framework_preload("agent:app", AGENT) == ("openai", "anthropic")
    assert framework_preload("gemini_agent:app", AGENT) == ("google.genai",)
    for app, _ in COMPARED:
        assert preloading_forks(lab, framework_preload(app, AGENT), AGENT) > 0
    targets = [
        AppTarget(app, service, "ask", "Weather in Paris and Rome?", mode=service, cwd=str(AGENT))
        for app, service in COMPARED
    ]
    script = load_script_file(AGENT / "script.toml", "steady")
    compared = compared_without_preload(
        lab,
        [matrices[service] for _, service in COMPARED],
        lambda kills: sweep_targets(lab, targets=targets, scripts=[("steady", script)], kills=kills),
    )
    for (_, service), pairs in zip(COMPARED, compared, strict=True):
        assert_same_counts(pairs, matrices[service])


@pytest.mark.parametrize("service", GEMINI)
def test_a_gemini_agent_is_swept_whole_and_streamed(matrices: dict[str, SweepMatrix], service: str) -> None:
    # google-genai, pointed at the stub by GOOGLE_GEMINI_BASE_URL: two tools in one answer, then the text.
    matrix = matrices[service]
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
