"""The formats CI systems show findings in: SARIF 2.1.0 (GitHub code scanning and others), JUnit XML (every CI
server's test view) and GitHub Actions' workflow commands (annotations on the lines of a pull request)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from paidtwice.report._findings import RULES, Finding, TestCase

__all__ = ["github_annotations", "sarif", "write_junit", "write_sarif"]

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def sarif(findings: Sequence[Finding]) -> dict[str, Any]:
    """One SARIF 2.1.0 log: one run of paidtwice, its rules (those the findings name, with their help) and a
    result per finding, placed on its file and line relative to the project (`%SRCROOT%`)."""
    used = sorted({f.rule for f in findings})
    index = {rule: i for i, rule in enumerate(used)}
    rules = [
        {
            "id": rule,
            "name": RULES[rule].name,
            "shortDescription": {"text": RULES[rule].name},
            "fullDescription": {"text": RULES[rule].name},
            "help": {"text": RULES[rule].help, "markdown": RULES[rule].help},
        }
        for rule in used
    ]
    results = []
    for finding in findings:
        result: dict[str, Any] = {
            "ruleId": finding.rule,
            "ruleIndex": index[finding.rule],
            "level": finding.level,
            "message": {"text": finding.message},
        }
        if finding.path is not None:
            region: dict[str, Any] = {"startLine": max(1, finding.line or 1)}
            if finding.col is not None:
                region["startColumn"] = max(1, finding.col)
            result["locations"] = [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": Path(finding.path).as_posix(), "uriBaseId": "%SRCROOT%"},
                        "region": region,
                    }
                }
            ]
        results.append(result)
    driver = {
        "name": "paidtwice",
        "version": version("paidtwice"),
        "rules": rules,
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results, "columnKind": "unicodeCodePoints"}],
    }


def write_sarif(path: Path, findings: Sequence[Finding]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(sarif(findings), indent=2) + "\n")


def write_junit(path: Path, cases: Sequence[TestCase]) -> None:
    """JUnit XML: a <testsuite> per suite, a <testcase> per case, with <failure> or <skipped>."""
    root = ET.Element("testsuites", name="paidtwice")
    suites: dict[str, ET.Element] = {}
    for case in cases:
        suite = suites.get(case.suite)
        if suite is None:
            suite = suites[case.suite] = ET.SubElement(root, "testsuite", name=case.suite)
        element = ET.SubElement(
            suite, "testcase", name=case.name, classname=case.suite, time=f"{case.time:.3f}"
        )
        if case.properties:
            properties = ET.SubElement(element, "properties")
            for name, value in case.properties:
                ET.SubElement(properties, "property", name=name, value=value)
        if case.failure is not None:
            ET.SubElement(element, "failure", message=case.failure).text = case.failure
        elif case.skipped is not None:
            ET.SubElement(element, "skipped", message=case.skipped)
    for name, suite in suites.items():
        mine = [c for c in cases if c.suite == name]
        suite.set("tests", str(len(mine)))
        suite.set("failures", str(sum(c.failure is not None for c in mine)))
        suite.set("errors", "0")
        suite.set("skipped", str(sum(c.failure is None and c.skipped is not None for c in mine)))
        suite.set("time", f"{sum(c.time for c in mine):.3f}")
    root.set("tests", str(len(cases)))
    root.set("failures", str(sum(c.failure is not None for c in cases)))
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def _escape(text: str, *, property: bool = False) -> str:
    """Workflow commands' escaping: %, CR and LF everywhere; also : and , in a property."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property else text


def github_annotations(findings: Sequence[Finding]) -> list[str]:
    """One `::error file=...,line=...,title=...::message` line per finding (`::warning` for a warning: an
    undecided point the user allowed)."""
    lines = []
    for finding in findings:
        props = []
        if finding.path is not None:
            props.append(f"file={_escape(finding.path, property=True)}")
            if finding.line is not None:
                props.append(f"line={finding.line}")
            if finding.col is not None:
                props.append(f"col={finding.col}")
        props.append(f"title={_escape(f'{finding.rule} {RULES[finding.rule].name}', property=True)}")
        level = "error" if finding.level == "error" else "warning"
        lines.append(f"::{level} {','.join(props)}::{_escape(finding.message)}")
    return lines
