"""Every `paidtwice ...` command line the README and the docs show parses against the click commands, and
every command the deck's tutorial shows is run by a test or is marked as an example to adapt.

A line parses when its command exists, every option is one the command has (with a value where it takes one,
and one of its choices where it has choices), and it gives no more arguments than the command takes. Values
are not converted: a path in an example need not exist here.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from paidtwice.cli import cli
from paidtwice.lab import COMPARISONS, CURVES, EXPERIMENTS, WALKS

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TUTORIAL = DOCS / "tutorial" / "deck.md"
PLACEHOLDER = re.compile(r"\b[A-Z][A-Z_]{2,}\b|\.\.\.")
"""An argument a reader replaces (INVOCATION_ID, RESULTS.json...): the command is an example to adapt."""


def code_blocks(text: str) -> Iterator[str]:
    for match in re.finditer(r"^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S):
        yield match.group(1)


def command_lines(text: str) -> Iterator[str]:
    """The `paidtwice` command lines in a page's code blocks, continuation lines joined, comments dropped."""
    for block in code_blocks(text):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.strip().removeprefix("$ ")
            line = re.sub(r"^(\.venv/bin/)?paidtwice\b", "paidtwice", line)
            if not line.startswith("paidtwice ") and line != "paidtwice":
                continue
            words = shlex.split(line, comments=True)
            for stop in ("|", ">", "&&", ";"):
                if stop in words:
                    words = words[: words.index(stop)]
            yield shlex.join(words)


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def shown() -> list[tuple[str, str]]:
    return [
        (str(page.relative_to(ROOT)), line) for page in pages() for line in command_lines(page.read_text())
    ]


def parse_error(line: str) -> str | None:
    """Why the command line does not parse against the click commands, or None."""
    words = shlex.split(line)[1:]
    if not words or words[0].startswith("-"):
        return None if all(w in ("--help", "--version") for w in words) else f"not a command: {line}"
    group = cli
    assert isinstance(group, click.Group)
    command = group.commands.get(words[0])
    if command is None:
        return f"no command {words[0]!r}"
    while isinstance(command, click.Group) and len(words) > 1 and not words[1].startswith("-"):
        # A group's subcommand (`paidtwice lab up`)
        sub = command.commands.get(words[1])
        if sub is None:
            return f"no command {words[0]} {words[1]!r}"
        command, words = sub, words[1:]
    ctx = click.Context(command, info_name=words[0])
    parser = command.make_parser(ctx)
    try:
        values, extra, _ = parser.parse_args(words[1:])
    except click.UsageError as err:
        return err.format_message()
    if extra and not any(isinstance(p, click.Argument) and p.nargs == -1 for p in command.params):
        return f"too many arguments: {extra}"
    for param in command.params:
        value = values.get(param.name) if param.name else None
        if value is None or not isinstance(param.type, click.Choice):
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            if item not in param.type.choices:
                return f"{item!r} is not one of {list(param.type.choices)} for {param.name}"
    return None


@pytest.mark.parametrize(("page", "line"), shown())
def test_a_command_shown_in_the_docs_parses(page: str, line: str) -> None:
    assert parse_error(line) is None, f"{page}: {line}: {parse_error(line)}"


def test_the_docs_show_commands() -> None:
    assert len(shown()) > 30


def test_a_command_that_does_not_exist_or_a_wrong_option_is_caught() -> None:
    assert parse_error("paidtwice sweeps") == "no command 'sweeps'"
    assert parse_error("paidtwice sweep --chek") is not None
    assert parse_error("paidtwice sweep --mode half") is not None
    assert parse_error("paidtwice run naive-flip extra") is not None
    assert parse_error("paidtwice sweep --mode journaled --check") is None
    assert parse_error("paidtwice lab up --cluster 3") is None
    assert parse_error("paidtwice lab down") is not None


def test_every_command_of_the_deck_tutorial_is_run_by_a_test_or_marked_as_an_example() -> None:
    """`paidtwice run ROW` runs in the tests that run its kind of row (every experiment in conftest's
    deck_records, the curve, the walk, the comparisons by name); `deck` is deck_records' concurrent run;
    `experiments` runs here; a command with a placeholder is an example to adapt."""
    tests = "".join(p.read_text() for p in (ROOT / "tests").rglob("*.py"))
    run_by = [
        ({row.name for row in EXPERIMENTS}, "def deck_records"),
        ({row.name for row in CURVES}, ".run_curve(CURVES"),
        ({row.name for row in WALKS}, "run_walk(lab, WALKS"),
        ({row.name for row in COMPARISONS}, ".run_comparison(row)"),
    ]
    unrun = []
    for line in command_lines(TUTORIAL.read_text()):
        words = shlex.split(line)
        if PLACEHOLDER.search(line):
            continue
        if words[1] == "run" and any(words[2] in rows and call in tests for rows, call in run_by):
            continue
        if words[1] == "deck" and "concurrent=True" in tests:
            continue
        if words[1:] == ["experiments"]:
            result = CliRunner().invoke(cli, ["experiments"])
            assert result.exit_code == 0, result.output
            assert all(row.name in result.output for row in EXPERIMENTS)
            continue
        unrun.append(line)
    assert unrun == []


def test_every_code_block_of_the_docs_is_closed() -> None:
    """An unclosed fence swallows the rest of its page into one code block, which the build does not flag."""
    odd = [
        str(page.relative_to(ROOT))
        for page in pages()
        if sum(1 for line in page.read_text().splitlines() if line.lstrip().startswith("```")) % 2
    ]
    assert odd == []
