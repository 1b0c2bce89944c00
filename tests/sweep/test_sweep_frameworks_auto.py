"""The framework examples swept with no script: auto answers drive the OpenAI Agents SDK, pydantic-ai,
LangChain and Google's ADK (its Gemini calls answered by the stub's Gemini API) in both forms (the tool's
arguments filled from the question, as a model does), one sweep for all of them. Through Restate's
integration nothing pays again outside flight (`--check` passes); the plain forms pay again. ADK's agents
are forked from a fork server that preloaded ADK (`paidtwice.agent._preload`), shown to change no count."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import assert_same_counts, compared_without_preload, preloading_forks

from paidtwice.agent import framework_preload
from paidtwice.lab import Lab
from paidtwice.stub._auto import auto_script
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
    "AdkPlain": ("adk_app:app", False),
    "AdkDurable": ("adk_app:app", True),
}


@pytest.fixture(scope="module")
def matrices(lab: Lab) -> dict[str, SweepMatrix]:
    targets = [
        AppTarget(app, service, "quote", QUESTION, mode=service, cwd=str(EXAMPLES))
        for service, (app, _) in FORMS.items()
    ]
    swept = sweep_targets(lab, targets=targets, scripts=[("steady", auto_script("steady"))])
    return {m.mode: m for m in swept}


@pytest.mark.parametrize("service", list(FORMS))
def test_framework_form_swept_without_a_script(matrices: dict[str, SweepMatrix], service: str) -> None:
    matrix = matrices[service]
    assert matrix.clean.model_calls == 2  # the tool call, then the final answer
    assert QUESTION in json.loads(matrix.clean.answer or "null")
    assert (
        dict(matrix.clean.step_runs)["convert"] == 1
    )  # its arguments (120, EUR, USD) came from the question
    for point in matrix.points:
        assert point.confirmed, point.crash_point
        assert point.status == "completed" and point.answer_matches, point.crash_point
    if FORMS[service][1]:
        for point in matrix.points:
            assert point.extra_model_calls == point.model_calls_in_flight, point.crash_point
        assert_pays_once([matrix])
    else:
        assert any(p.kind == "model-returned" and p.extra_model_calls for p in matrix.points)
        with pytest.raises(AssertionError, match="paid twice"):
            assert_pays_once([matrix])


def test_the_adk_preload_changes_no_count(lab: Lab, matrices: dict[str, SweepMatrix]) -> None:
    """The module's sweep forked each ADK agent from a fork server that had imported google.adk and
    restate.ext.adk (ADK's agents, runners and google-genai's types: most of the app's import) and what ADK
    imports once it runs (its workflow and single-agent flow); AdkDurable
    swept again with the preload off, each agent importing them itself, counts the same: its clean run, and
    point for point the points of the shares `covering_shards` picks, the fewest that still hold every kind
    of point it has. That is enough: the preload changes how each agent starts, the same at every start;
    the clean run and each way a restarted agent recovers (each kind of point) are compared."""
    modules = framework_preload("adk_app:app", EXAMPLES)
    assert {"google.adk", "google.adk.workflow._workflow", "restate.ext.adk"} <= set(modules)
    assert preloading_forks(lab, modules, EXAMPLES) > 0
    target = AppTarget("adk_app:app", "AdkDurable", "quote", QUESTION, mode="AdkDurable", cwd=str(EXAMPLES))
    (compared,) = compared_without_preload(
        lab,
        [matrices["AdkDurable"]],
        lambda kills: sweep_targets(
            lab, targets=[target], scripts=[("steady", auto_script("steady"))], kills=kills
        ),
    )
    assert_same_counts(compared, matrices["AdkDurable"])
