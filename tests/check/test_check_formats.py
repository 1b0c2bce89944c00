"""`paidtwice check --format github --sarif FILE --junit FILE` as the CI page shows it, on the lint
check alone (no server): the findings as GitHub workflow commands on their file and line,
both reports written."""

from __future__ import annotations

import json
import re
from pathlib import Path

from check.test_check import make_project, paidtwice
from junitparser import JUnitXml


def test_github_format_annotates_the_findings_line_and_writes_sarif_and_junit(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    done = paidtwice(
        "check", "--only", "lint", "--format", "github", "--sarif", "paidtwice.sarif",
        "--junit", "paidtwice-junit.xml",
        cwd=root,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    annotations = re.findall(r"^::error file=([^,]+),line=(\d+)[^:]*::(.+)$", done.stdout, flags=re.M)
    assert annotations, done.stdout
    # The annotation sits where the SARIF result does: the handler's line that reaches the model call
    sarif = json.loads((root / "paidtwice.sarif").read_text())
    [finding] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "PT001"]
    where = finding["locations"][0]["physicalLocation"]
    shown = (where["artifactLocation"]["uri"], str(where["region"]["startLine"]))
    assert [(f, n) for f, n, _ in annotations] == [shown] == [("agents/naive_agent.py", shown[1])]
    assert "PT001" in done.stdout
    assert JUnitXml.fromfile(str(root / "paidtwice-junit.xml")).tests >= 1
