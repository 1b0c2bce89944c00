"""Every HTTP client is counted: agents on requests, urllib, aiohttp and the anthropic client, swept.

No header is added to their requests: the stub counts each point's calls on the point's own lane, and the
host logs model requests (for the crash points) whichever client makes them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import DEADLINE

from paidtwice._exceptions import UsageError
from paidtwice.agent._env import agent_env
from paidtwice.lab import Lab
from paidtwice.stub._turns import load_script_file
from paidtwice.sweep._runs import NO_MODEL_CALL
from paidtwice.sweep._sweep import SweepMatrix, sweep_targets
from paidtwice.targets import AppTarget
from paidtwice.testing import assert_pays_once

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = Path(__file__).resolve().parent / "clients"
SCRIPT = CLIENTS / "script.toml"
QUESTION = "How much is 120 EUR in USD?"
AGENTS = {
    "requests": ("requests_agent:app", "RequestsAgent"),
    "urllib": ("urllib_agent:app", "UrllibAgent"),
    "aiohttp": ("aiohttp_agent:app", "AiohttpAgent"),
    "anthropic": ("anthropic_agent:app", "AnthropicAgent"),
}


@pytest.fixture(scope="module")
def matrices(lab: Lab) -> dict[str, SweepMatrix]:
    """All four agents swept at once under the steady script, on the session's server and stub."""
    targets = [
        AppTarget(app, service, "quote", QUESTION, mode=client, cwd=str(CLIENTS))
        for client, (app, service) in AGENTS.items()
    ]
    swept = sweep_targets(lab, targets=targets, scripts=[("steady", load_script_file(SCRIPT, "steady"))])
    return {matrix.mode: matrix for matrix in swept}


@pytest.mark.parametrize("client", list(AGENTS))
def test_each_client_model_calls_and_crash_points_are_found(
    matrices: dict[str, SweepMatrix], client: str
) -> None:
    matrix = matrices[client]
    assert matrix.clean.model_calls == 2, client
    assert matrix.clean.answer == json.dumps("120 EUR is 129.60 USD.")
    kinds = [p.kind for p in matrix.points]
    names = [p.crash_point for p in matrix.points]
    assert kinds.count("in-flight-model") == 2, names
    assert "after model call 1 returned (not journaled)" in names
    assert "in flight: step convert" in names
    returned = 0
    for point in matrix.points:
        assert point.confirmed, (client, point.crash_point)
        assert point.status == "completed" and point.answer_matches, (client, point.crash_point)
        returned += point.kind == "model-returned"
        in_flight = 1 if point.kind == "in-flight-model" else 0
        # The model call is made outside the journal: every answer that had come back is paid again.
        assert point.extra_model_calls == returned + in_flight, (client, point.crash_point)
        assert point.model_calls_in_flight == in_flight, (client, point.crash_point)
    with pytest.raises(AssertionError, match="paid twice"):
        assert_pays_once([matrix])


def test_a_sweep_that_checked_nothing_never_passes(matrices: dict[str, SweepMatrix]) -> None:
    with pytest.raises(AssertionError, match="nothing was checked"):
        assert_pays_once([])
    empty = [dataclasses.replace(m, points=()) for m in matrices.values()]
    with pytest.raises(AssertionError, match="nothing was checked"):
        assert_pays_once(empty)


def test_a_client_the_host_does_not_follow_stops_the_sweep(lab: Lab) -> None:
    # Its calls reach the stub, but no crash point could be derived for them: the sweep says so.
    target = AppTarget(
        "raw_socket_agent:app", "RawSocketAgent", "quote", QUESTION, mode="raw", cwd=str(CLIENTS)
    )
    with pytest.raises(UsageError, match="counted 1 model calls .* seen making 0: .* does not follow"):
        sweep_targets(lab, targets=[target], scripts=[("steady", load_script_file(SCRIPT, "steady"))])


def test_a_clean_run_that_fails_every_attempt_stops_the_sweep_with_its_error(lab: Lab) -> None:
    # Not a wait of minutes ending in "did not finish": the handler's own failure, read from the server.
    target = AppTarget("failing_agent:app", "FailingAgent", "quote", QUESTION, mode="fails", cwd=str(CLIENTS))
    with pytest.raises(UsageError, match=r"fails: \d+ attempts ended in an error, .*KeyError.*'verdict'"):
        sweep_targets(lab, targets=[target], scripts=[("steady", load_script_file(SCRIPT, "steady"))])


def test_check_on_an_agent_whose_calls_never_reach_the_stub_exits_2() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "paidtwice",
            "sweep",
            "--app",
            "unreachable_agent:app",
            "--service",
            "UnreachableAgent",
            "--handler",
            "quote",
            "--input",
            json.dumps(QUESTION),
            "--script",
            str(SCRIPT),
            "--variation",
            "steady",
            "--app-dir",
            str(CLIENTS),
            "--check",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        timeout=DEADLINE,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].endswith(NO_MODEL_CALL), done.stderr


def test_an_app_whose_framework_is_not_installed_is_one_line_and_exit_2() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "paidtwice",
            "sweep",
            "--app",
            "litellm_agent:app",
            "--service",
            "LitellmAgent",
            "--handler",
            "quote",
            "--script",
            str(SCRIPT),
            "--app-dir",
            str(CLIENTS),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=DEADLINE,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs litellm, which is not installed" in lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_an_agents_libraries_are_kept_from_reaching_past_the_stub() -> None:
    # The Agents SDK would export traces to api.openai.com, litellm fetch its price list at import.
    env = agent_env(openai_url="http://127.0.0.1:1/v1", given={})
    assert env["OPENAI_AGENTS_DISABLE_TRACING"] == "1"
    assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    # A user who wants them on says so, and is obeyed.
    mine = agent_env(openai_url="http://127.0.0.1:1/v1", given={"OPENAI_AGENTS_DISABLE_TRACING": "0"})
    assert mine["OPENAI_AGENTS_DISABLE_TRACING"] == "0"
    # LangChain's ChatOpenAI reads OPENAI_API_BASE before OPENAI_BASE_URL: a user's own is replaced too.
    proxied = agent_env(
        openai_url="http://127.0.0.1:1/v1", given={"OPENAI_API_BASE": "https://proxy.example/v1"}
    )
    assert proxied["OPENAI_API_BASE"] == proxied["OPENAI_BASE_URL"] == "http://127.0.0.1:1/v1"


@pytest.mark.parametrize(
    "where", [["--app", "requests_agent:app", "--app-dir"], ["--cmd", "node a.ts", "--cwd"]]
)
def test_a_directory_that_is_not_there_is_named_in_one_line(tmp_path: Path, where: list[str]) -> None:
    missing = tmp_path / "no-such-dir"
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", "sweep", *where, str(missing)]
        + ["--service", "RequestsAgent", "--handler", "quote", "--input", json.dumps(QUESTION)]
        + ["--script", str(SCRIPT)],
        capture_output=True,
        text=True,
        cwd=CLIENTS,
        timeout=DEADLINE,
    )
    assert done.returncode == 2, done.stderr
    # Not "cannot import requests_agent" (found in the current directory, or not at all): the directory.
    assert done.stderr.strip().splitlines() == [f"Error: {where[-1]} {missing} is not a directory"]
