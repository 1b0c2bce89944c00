"""`paidtwice check` on a user's project made in a temporary directory with a [tool.paidtwice] table: the
naive agent fails with SARIF valid against the SARIF 2.1.0 schema and JUnit XML a JUnit reader reads, the
journaled one passes, shards 1/2 and 2/2 of it give the points of the unsharded run. Three runs, each its own
server and sweep: both handlers unsharded, asserted several ways, and the journaled one's two shards."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from junitparser import Failure, JUnitXml, Skipped
from support import run_paidtwice

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "project"
SCHEMA = HERE / "sarif-schema-2.1.0.json"

PYPROJECT = """\
[project]
name = "user-agents"
version = "0"

[tool.paidtwice]
app-dir = "agents"
lint = ["agents"]

[[tool.paidtwice.sweep]]
app = "app:app"
{handler}input = '"What does a crash cost?"'
script = "agents/script.toml"
variations = ["steady"]

[tool.paidtwice.budget]
repaid-model-calls = 0
"""


def paidtwice(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_paidtwice(*args, cwd=cwd)


def make_project(root: Path, *, handler: str = "") -> Path:
    shutil.copytree(PROJECT, root / "agents", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "pyproject.toml").write_text(PYPROJECT.format(handler=handler))
    return root


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """Both handlers of the app (none named): the naive one pays twice."""
    root = make_project(tmp_path_factory.mktemp("whole"))
    done = paidtwice(
        "check",
        "--sarif",
        "out/check.sarif",
        "--junit",
        "out/check.xml",
        "--json",
        "out/points.json",
        cwd=root,
    )
    return root, done


@pytest.fixture(scope="module")
def journaled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The journaled handler alone, as two shards (`whole` swept it unsharded: its points are the ones the
    shards must split)."""
    root = make_project(tmp_path_factory.mktemp("journaled"), handler='service = "Journaled"\n')
    runs = {
        name: paidtwice("check", "--only", "sweep", "--shard", shard, "--json", f"{name}.json", cwd=root)
        for name, shard in (("s1", "1/2"), ("s2", "2/2"))
    }
    return {"root": root, "runs": runs}


def test_naive_agent_fails_the_check(whole: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    _, done = whole
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    # A line per target and check: lint, a sweep line per handler (discovered, none named), the budgets.
    assert any(line.startswith("FAIL  lint") for line in lines), done.stdout
    assert any(line.startswith("FAIL  sweep") and "Naive/answer" in line for line in lines), done.stdout
    assert any(line.startswith("ok    sweep") and "Journaled/answer" in line for line in lines), done.stdout
    assert any(line.startswith("FAIL  budget") and "Naive/answer" in line for line in lines), done.stdout
    assert any(line.startswith("ok    budget") and "Journaled/answer" in line for line in lines), done.stdout
    assert "verdict: 3 of 5 checks fail" in done.stdout


def test_sarif_is_valid_and_on_the_handlers_line(
    whole: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    root, _ = whole
    log = json.loads((root / "out" / "check.sarif").read_text())
    jsonschema.validate(log, json.loads(SCHEMA.read_text()))
    results = log["runs"][0]["results"]
    rules = {rule["id"]: rule for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert {"PT001", "PT101", "PT301"} <= set(rules)
    assert all(rule["help"]["text"] for rule in rules.values())
    swept = [r for r in results if r["ruleId"] == "PT101"]
    assert swept and all("Naive/answer" in r["message"]["text"] for r in swept)
    handler_line = _line_of(PROJECT / "naive_agent.py", "@naive.handler()")
    for result in swept:
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "agents/naive_agent.py"
        assert location["region"]["startLine"] == handler_line
    lint = [r for r in results if r["ruleId"] == "PT001"]
    assert lint and lint[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith(
        "agents/"
    )


def test_junit_has_a_case_per_crash_point(whole: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    root, _ = whole
    xml = JUnitXml.fromfile(str(root / "out" / "check.xml"))
    points = json.loads((root / "out" / "points.json").read_text())
    suites = {suite.name: list(suite) for suite in xml}
    naive = suites["sweep Naive/answer steady"]
    journaled = suites["sweep Journaled/answer steady"]
    assert len(naive) + len(journaled) == len(points)
    assert any(isinstance(r, Failure) for case in naive for r in case.result)
    assert not any(isinstance(r, Failure | Skipped) for case in journaled for r in case.result)
    failed = [case for case in naive if case.result]
    twice = [p for p in points if p["pays_twice"]]
    assert len(failed) == len(twice) and all(p["service"] == "Naive" for p in twice)
    assert all(p["handler"] == "answer" for p in points)


def test_journaled_agent_passes(
    whole: tuple[Path, subprocess.CompletedProcess[str]], journaled: dict[str, Any]
) -> None:
    """Its sweep and budget hold over all its points (`whole`), and a check of a config naming it alone
    passes, each shard of it (half its points each) with nothing else swept."""
    _, both = whole
    lines = both.stdout.splitlines()
    assert any(line.startswith("ok    sweep") and "Journaled/answer" in line for line in lines), both.stdout
    assert any(line.startswith("ok    budget") and "Journaled/answer" in line for line in lines), both.stdout
    for name in ("s1", "s2"):
        done = journaled["runs"][name]
        assert done.returncode == 0, done.stdout + done.stderr
        assert "ok    sweep" in done.stdout and "Journaled/answer" in done.stdout
        assert "Naive" not in done.stdout
        assert "verdict: all 2 checks hold" in done.stdout


def test_shards_together_are_one_run(
    whole: tuple[Path, subprocess.CompletedProcess[str]], journaled: dict[str, Any]
) -> None:
    root: Path = journaled["root"]
    for name in ("s1", "s2"):
        assert journaled["runs"][name].returncode == 0, journaled["runs"][name].stderr

    def points(path: Path) -> list[tuple[str, str, int, str]]:
        records = json.loads(path.read_text())
        return sorted(
            (r["mode"], r["script"], r["order"], r["crash_point"])
            for r in records
            if r["mode"] == "Journaled/answer"
        )

    # The unsharded run's points of the handler: `whole` swept it with the other one.
    one = points(whole[0] / "out" / "points.json")
    first, second = points(root / "s1.json"), points(root / "s2.json")
    assert one and first and second and not set(first) & set(second)
    assert sorted(first + second) == one
    merged = paidtwice("report", "s1.json", "s2.json", "--check", "-o", "merged.html", cwd=root)
    assert merged.returncode == 0, merged.stderr
    assert f"verdict over 2 files: {len(one)} crash points: none pays twice" in merged.stdout
    assert (root / "merged.html").is_file()


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), start=1) if text in line)
