"""The framework examples swept in both forms: the framework's plain run in a handler, and Restate's
integration (OpenAI Agents SDK: Runner.run vs DurableRunner.run; pydantic-ai: Agent.run vs RestateAgent;
LangChain: create_agent without and with RestateMiddleware)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import assert_same_counts, compared_without_preload, preloading_forks

from paidtwice.agent import framework_preload
from paidtwice.lab import Lab
from paidtwice.lint import lint_paths
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._sweep import SweepMatrix, sweep_targets
from paidtwice.targets import AppTarget
from paidtwice.testing import assert_pays_once

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "frameworks"
QUESTION = "How much is 120 EUR in USD?"
FORMS = {
    # service: (app, journals its model calls)
    "AgentsPlain": ("openai_agents_app:app", False),
    "AgentsDurable": ("openai_agents_app:app", True),
    "PydanticPlain": ("pydantic_ai_app:app", False),
    "PydanticDurable": ("pydantic_ai_app:app", True),
    "LangchainPlain": ("langchain_app:app", False),
    "LangchainDurable": ("langchain_app:app", True),
}


@pytest.fixture(scope="module")
def matrices(lab: Lab) -> dict[str, SweepMatrix]:
    """Every form swept at once under the steady script, on the session's server and stub."""
    targets = [
        AppTarget(app, service, "quote", QUESTION, mode=service, cwd=str(EXAMPLES))
        for service, (app, _) in FORMS.items()
    ]
    script = load_script_file(EXAMPLES / "script.toml", "steady")
    return {m.mode: m for m in sweep_targets(lab, targets=targets, scripts=[("steady", script)])}


@pytest.mark.parametrize("service", list(FORMS))
def test_framework_form_swept(matrices: dict[str, SweepMatrix], service: str) -> None:
    matrix = matrices[service]
    journaled = FORMS[service][1]
    assert matrix.clean.model_calls == 2
    assert matrix.clean.answer == json.dumps("120 EUR is 129.60 USD.")
    assert dict(matrix.clean.step_runs)["convert"] == 1
    kinds = [p.kind for p in matrix.points]
    assert kinds.count("in-flight-model") == 2
    for point in matrix.points:
        assert point.confirmed, point.crash_point
        assert point.status == "completed" and point.answer_matches, point.crash_point
    if journaled:
        # The integration journals each model call: a point pays again only for a call cut off in flight.
        assert "model-returned" not in kinds
        for point in matrix.points:
            assert point.extra_model_calls == point.model_calls_in_flight, point.crash_point
            assert point.extra_step_runs == point.steps_in_flight, point.crash_point
        assert_pays_once([matrix])
    else:
        returned = 0
        for point in matrix.points:
            returned += point.kind == "model-returned"
            in_flight = 1 if point.kind == "in-flight-model" else 0
            assert point.extra_model_calls == returned + in_flight, point.crash_point
        with pytest.raises(AssertionError, match="paid twice"):
            assert_pays_once([matrix])


FRAMEWORKS = ("Agents", "Pydantic", "Langchain")


@pytest.fixture(scope="module")
def unpreloaded(
    lab: Lab, matrices: dict[str, SweepMatrix]
) -> dict[str, list[tuple[SweepMatrix, SweepMatrix]]]:
    """Each framework's Durable form swept again, at once, with the preload off (each agent imports its
    framework itself), after `matrices` was swept with it: the clean runs whole, and of the points only the
    shares `covering_shards` picks (the fewest that still hold each kind of point every form has). By
    service: (the sweep without the preload, the same points of the one with it), for each share."""
    targets = [
        AppTarget(
            FORMS[f"{f}Durable"][0], f"{f}Durable", "quote", QUESTION, mode=f"{f}Durable", cwd=str(EXAMPLES)
        )
        for f in FRAMEWORKS
    ]
    script = load_script_file(EXAMPLES / "script.toml", "steady")
    compared = compared_without_preload(
        lab,
        [matrices[target.mode] for target in targets],
        lambda kills: sweep_targets(lab, targets=targets, scripts=[("steady", script)], kills=kills),
    )
    return {target.mode: pairs for target, pairs in zip(targets, compared, strict=True)}


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_framework_preload_changes_no_count(
    lab: Lab,
    matrices: dict[str, SweepMatrix],
    unpreloaded: dict[str, list[tuple[SweepMatrix, SweepMatrix]]],
    framework: str,
) -> None:
    """The module's sweep forked each agent from a fork server that had imported the app's framework
    (paidtwice.agent._preload); the Durable form swept again with the preload off, each agent importing its
    framework itself, counts the same: its clean run, and point for point the points of a share that holds
    every kind of point the form has (after an entry, in flight in a model call, in a step). That is enough:
    what the preload changes is how each agent starts (its framework imported before the fork, not after),
    the same at every start; the clean run and each kind of point (each way a restarted agent recovers:
    replaying journaled calls, asking again) are compared, and the other points of a kind repeat the same
    start and recovery at another entry. The preload saves imports, never a verdict."""
    service = f"{framework}Durable"
    modules = framework_preload(FORMS[service][0], EXAMPLES)
    assert modules, f"no module of {FORMS[service][0]} is on the preload's allowlist"
    assert preloading_forks(lab, modules, EXAMPLES) > 0
    assert_same_counts(unpreloaded[service], matrices[service])


def test_lint_finds_exactly_the_plain_forms() -> None:
    result = lint_paths([EXAMPLES])
    assert result.handlers == len(FORMS) + 2  # and adk_app.py's two, swept in test_sweep_frameworks_auto.py
    found = sorted((Path(f.path).name, f.code) for f in result.findings)
    assert found == [
        ("adk_app.py", "PT001"),
        ("langchain_app.py", "PT001"),
        ("openai_agents_app.py", "PT001"),
        ("pydantic_ai_app.py", "PT001"),
    ]
    assert all("handler quote()" in f.message for f in result.findings)


CLIENTS = Path(__file__).resolve().parent / "clients"


def test_durable_runner_does_not_journal_a_model_object(lab: Lab) -> None:
    # Agent(model=OpenAIChatCompletionsModel(...)) through DurableRunner: its call is outside the journal.
    app = "agents_model_object_agent:app"
    target = AppTarget(app, "AgentsModelObject", "quote", QUESTION, "model-object", cwd=str(CLIENTS))
    script = load_script_file(CLIENTS / "answer.toml", "steady")
    (matrix,) = sweep_targets(lab, targets=[target], scripts=[("steady", script)])
    assert matrix.clean.model_calls == 1
    assert matrix.clean.journaled_model_calls == 0
    assert not any("call LLM" in entry for entry in matrix.clean.journal), matrix.clean.journal
    returned = [p for p in matrix.points if p.kind == "model-returned"]
    assert len(returned) == 1 and returned[0].confirmed
    assert returned[0].extra_model_calls == 1 and returned[0].model_calls_in_flight == 0
    with pytest.raises(AssertionError, match="paid twice"):
        assert_pays_once([matrix])
    path = CLIENTS / "agents_model_object_agent.py"
    marked = [n for n, line in enumerate(path.read_text().splitlines(), 1) if "lint: model-object" in line]
    assert [(f.line, f.code) for f in lint_paths([path]).findings] == [(marked[0], "PT001")]
