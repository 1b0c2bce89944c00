"""lint on Google ADK agents: a Runner's run without restate.ext.adk's RestatePlugin is PT001, one with it
passes, and one whose plugins lint cannot read is said to be undecided, never a finding.

The corpus (tests/lint/corpus/fw_adk*.py) holds the verdicts line by line; test_lint.py checks them all."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import DEADLINE

from paidtwice.lint import lint_paths

CORPUS = Path(__file__).parent / "corpus"
EXAMPLES = CORPUS / "fw_adk_restate_examples.py"
OWN_PLUGIN = CORPUS / "fw_adk_own_plugin.py"


def run_async_lines(text: str) -> list[int]:
    return [n for n, line in enumerate(text.splitlines(), start=1) if ".run_async(" in line]


def test_restates_examples_pass_and_their_twins_without_the_plugin_fail(tmp_path: Path) -> None:
    """The same agents with Restate's plugin taken out of each app: every run of them is PT001."""
    text = EXAMPLES.read_text()
    assert lint_paths([EXAMPLES]).findings == ()
    naive = re.sub(r"plugins=\[RestatePlugin\([^)]*\)\]", "plugins=[]", text)
    assert naive.count("plugins=[]") == 3
    twin = tmp_path / "naive_twin.py"
    twin.write_text(naive)
    result = lint_paths([twin])
    assert [(f.line, f.code) for f in result.findings] == [(n, "PT001") for n in run_async_lines(naive)]
    assert all("without restate.ext.adk.RestatePlugin" in f.message for f in result.findings)
    assert result.undecided == ()


def test_a_plugin_lint_does_not_know_is_undecided_not_a_finding() -> None:
    result = lint_paths([OWN_PLUGIN])
    assert result.findings == ()
    [(path, line, why)] = result.undecided
    assert path == str(OWN_PLUGIN) and line == run_async_lines(OWN_PLUGIN.read_text())[0]
    assert "a plugin lint does not know, fw_adk_own_plugin.RestatePlugin" in why


UNREADABLE = """
import restate
from google.adk import Runner
from google.adk.apps import App
from restate.ext.adk import RestatePlugin
from elsewhere import app as imported_app, make_plugins

svc = restate.Service("S")
more = [RestatePlugin()]
plugins = []


@svc.handler()
async def imported(ctx: restate.Context, q: str) -> None:
    Runner(app=imported_app).run_async(user_id="u", session_id="s", new_message=q)  # its app


@svc.handler()
async def built(ctx: restate.Context, q: str) -> None:
    Runner(app=App(name="a", root_agent=None, plugins=make_plugins())).run(user_id="u")  # a call


@svc.handler()
async def starred(ctx: restate.Context, q: str) -> None:
    Runner(agent=None, app_name="a", plugins=[*more]).run_async(user_id="u", session_id="s")  # a starred list


@svc.handler()
async def module_list(ctx: restate.Context, q: str) -> None:
    Runner(agent=None, app_name="a", plugins=plugins).run_async(user_id="u", session_id="s")  # may grow


@svc.handler()
async def module_list_with_restate(ctx: restate.Context, q: str) -> None:
    Runner(agent=None, app_name="a", plugins=more).run_async(user_id="u", session_id="s")
"""


def test_plugins_lint_cannot_read_are_undecided(tmp_path: Path) -> None:
    path = tmp_path / "unreadable.py"
    path.write_text(UNREADABLE)
    result = lint_paths([path])
    assert result.findings == ()
    lines = UNREADABLE.splitlines()
    undecided = {line: why for _, line, why in result.undecided}
    expected = {n for n, text in enumerate(lines, start=1) if "Runner(" in text and "# " in text}
    assert set(undecided) == expected and len(expected) == 4
    assert "its app is made where lint cannot read it" in " ".join(undecided.values())
    assert "which lint cannot follow" in " ".join(undecided.values())


@pytest.mark.parametrize("form", ["run_async", "run", "run_live"])
def test_every_way_a_runner_runs_the_agent_is_checked(tmp_path: Path, form: str) -> None:
    path = tmp_path / "forms.py"
    path.write_text(
        "import restate\nfrom google.adk.runners import Runner\nsvc = restate.Service('S')\n"
        "runner = Runner(agent=None, app_name='a')\n\n\n@svc.handler()\n"
        "async def h(ctx: restate.Context) -> None:\n"
        f"    runner.{form}(user_id='u', session_id='s')\n    runner.close()\n"
    )
    assert [(f.line, f.code) for f in lint_paths([path]).findings] == [(9, "PT001")]


def test_cli_says_what_it_cannot_decide_and_exits_0() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", "lint", str(OWN_PLUGIN)],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert (
        f"{OWN_PLUGIN}:{run_async_lines(OWN_PLUGIN.read_text())[0]}: not decided: cannot decide"
        in done.stderr
    )
    assert "0 findings in 1 file, 1 Restate handler, 1 call not decided" in done.stderr


HANDED_TO_A_HELPER = """
import restate
from google.adk import Runner
from google.adk.apps import App
from restate.ext.adk import RestatePlugin

plain_runner = Runner(app=App(name="x", root_agent=None))
durable_runner = Runner(app=App(name="x", root_agent=None, plugins=[RestatePlugin()]))
svc = restate.Service("S")


async def ask(runner: Runner, question: str) -> str:
    async for _event in runner.run_async(user_id="u", session_id="s", new_message=question):
        pass
    return question


async def ask_twice(runner: "Runner", question: str) -> str:
    return await ask(runner, await ask(runner, question))


@svc.handler()
async def plain(ctx: restate.Context, question: str) -> str:
    return await ask(plain_runner, question)


@svc.handler()
async def durable(ctx: restate.Context, question: str) -> str:
    return await ask_twice(durable_runner, question)
"""


def test_a_runner_handed_to_a_helper_is_undecided_at_each_handler(tmp_path: Path) -> None:
    """Which runner a helper's `runner: Runner` parameter is depends on its caller, which lint does not
    follow: each handler's call of the helper (however deep) is said to be undecided, never passed silently or
    flagged."""
    source = tmp_path / "helper.py"
    source.write_text(HANDED_TO_A_HELPER)
    result = lint_paths([source])
    assert result.findings == ()
    lines = HANDED_TO_A_HELPER.splitlines()
    calls = [
        n for n, line in enumerate(lines, start=1) if "return await ask" in line and "(runner" not in line
    ]
    assert [line for _path, line, _why in result.undecided] == calls
    assert all("ask()'s parameter 'runner'" in why for _path, _line, why in result.undecided)
