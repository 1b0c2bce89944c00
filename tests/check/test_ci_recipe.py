"""The CI recipe as documented: action.yml and the workflows in docs/how-to/ci.md are YAML, and every
`paidtwice` command line in them names a command and options that exist."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
import yaml

from paidtwice.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "how-to" / "ci.md"


def _command_lines(text: str) -> list[str]:
    """Every `paidtwice ...` command line in `text` (folded `>` lines joined), GitHub expressions made
    plain words."""
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    text = re.sub(r"\$\{\{[^}]*\}\}", "X", text)
    joined = re.sub(r"\n\s+(?=--)", " ", text)
    return [m.group(0) for m in re.finditer(r"(?<!install )paidtwice [a-z-]+[^\n&|;]*", joined)]


def _runs(value: object) -> list[str]:
    """Every `run:` of a workflow's or an action's steps, wherever it is nested."""
    if isinstance(value, dict):
        found = [value["run"]] if isinstance(value.get("run"), str) else []
        return found + [r for v in value.values() for r in _runs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _runs(v)]
    return []


def _blocks() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


def test_action_and_documented_workflows_are_yaml() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    blocks = _blocks()
    assert len(blocks) >= 4
    for block in blocks:
        assert isinstance(yaml.safe_load(block), dict)


@pytest.mark.parametrize("source", ["action.yml", "docs/how-to/ci.md"])
def test_every_paidtwice_command_line_is_one_paidtwice_takes(source: str) -> None:
    text = (ROOT / source).read_text()
    if source.endswith(".md"):
        docs = [yaml.safe_load(block) for block in _blocks()]
        consoles = re.findall(r"```console\n(.*?)```", text, flags=re.DOTALL)
        shell = [line[2:] for block in consoles for line in block.splitlines() if line.startswith("$ ")]
    else:
        docs, shell = [yaml.safe_load(text)], []
    lines = _command_lines("\n".join([*_runs(docs), *shell]))
    assert any(line.startswith("paidtwice check") for line in lines)
    for line in lines:
        words = shlex.split(line.replace('"X"', "X"))
        name = words[1]
        assert name in cli.commands, f"{source}: {line}: no command {name}"
        command = cli.commands[name]
        options = {opt for p in command.params if isinstance(p, click.Option) for opt in p.opts}
        for word in words[2:]:
            if word.startswith("--"):
                assert word.split("=")[0] in options, f"{source}: {line}: paidtwice {name} has no {word}"
