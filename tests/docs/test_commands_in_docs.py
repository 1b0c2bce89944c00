"""Every `paidtwice ...` command line the README and the docs show parses against the click commands; every
command the deck's tutorial shows is run by a test or is marked as an example to adapt; and every command a
how-to page, docs/index.md or README.md shows is run by the test tests/docs/run_by.py names, or is
illustrative: it has a placeholder and its code block says in a comment why it cannot run here.

A line parses when its command exists, every option is one the command has (with a value where it takes one,
and one of its choices where it has choices), and it gives no more arguments than the command takes. Values
are not converted: a path in an example need not exist here.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from docs.run_by import RUN_BY

from paidtwice.cli import cli
from paidtwice.deck import COMPARISONS, CURVES, EXPERIMENTS, WALKS

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
TUTORIAL = DOCS / "tutorial" / "deck.md"
HOW_TO = DOCS / "how-to"
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


def has_placeholder(line: str) -> bool:
    """Whether an argument of the line is a placeholder; a JSON input (`'"120 EUR in USD?"'`) is not one."""
    return any(PLACEHOLDER.search(word) for word in shlex.split(line) if not word.startswith(('"', "{", "[")))


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
        ({row.name for row in WALKS}, ".run_walk(WALKS"),
        ({row.name for row in COMPARISONS}, ".run_comparison(row)"),
    ]
    unrun = []
    for line in command_lines(TUTORIAL.read_text()):
        words = shlex.split(line)
        if has_placeholder(line):
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


def how_to_pages() -> list[Path]:
    return [ROOT / "README.md", DOCS / "index.md", *sorted(HOW_TO.glob("*.md"))]


def illustrative_without_a_reason(text: str) -> list[str]:
    """The illustrative commands (with a placeholder) of a page whose code block says nothing of why."""
    silent = []
    for block in code_blocks(text):
        reason = any(line.strip().startswith("#") for line in block.splitlines())
        silent += [
            line for line in command_lines(f"```\n{block}```\n") if has_placeholder(line) and not reason
        ]
    return silent


def words_of(node: ast.AST) -> set[str]:
    """The string literals, names and keyword arguments (`kills=`) a piece of code holds."""
    found = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            found.add(n.value)
        elif isinstance(n, ast.Name):
            found.add(n.id)
        elif isinstance(n, ast.Attribute):
            found.add(n.attr)
        elif isinstance(n, ast.keyword) and n.arg:
            found.add(f"{n.arg}=")
        elif isinstance(n, ast.Dict):
            with contextlib.suppress(ValueError, TypeError):
                found.add(json.dumps(ast.literal_eval(n), sort_keys=True))
    return found


def definitions(module: Path) -> dict[str, ast.AST]:
    """The functions and assignments of a test module, of its conftest.py files and of the test modules it
    imports: where a test's helpers and fixtures live."""
    tests = ROOT / "tests"
    sources = [module, *(d / "conftest.py" for d in module.parents if d.is_relative_to(tests))]
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            path = node.module.replace(".", "/")
            sources += [tests / f"{path}.py", module.parent / f"{path}.py", ROOT / "src" / f"{path}.py"]
    found: dict[str, ast.AST] = {}
    for source in reversed([s for s in sources if s.is_file()]):
        for node in ast.parse(source.read_text()).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                found[node.name] = node
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Name):
                        found[target.id] = node
    return found


def code_of(node_id: str) -> set[str] | None:
    """The string literals a test's code holds, with the helpers, constants and fixtures it names, or None
    when there is no such test."""
    path, _, name = node_id.partition("::")
    module = ROOT / path
    if not module.is_file():
        return None
    found = definitions(module)
    *owners, function = name.split("::")
    test: ast.AST | None = found.get(owners[0] if owners else function)
    for part in [*owners[1:], function] if owners else []:
        test = next((n for n in ast.walk(test) if getattr(n, "name", None) == part), None) if test else None
    if not isinstance(test, ast.FunctionDef | ast.AsyncFunctionDef) or not test.name.startswith("test"):
        return None
    seen: set[str] = set()
    todo: list[ast.AST] = [test]
    held: set[str] = set()
    while todo:
        node = todo.pop()
        held |= words_of(node)
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        names |= {a.arg for n in ast.walk(node) if isinstance(n, ast.arguments) for a in n.args}
        for named in names - seen:
            seen.add(named)
            if named in found:
                todo.append(found[named])
    return held


FLAG_IN_API = {"--check": "assert_pays_once", "--apply": "apply_way", "--cmd": "command="}
"""A flag a test that drives the library (not the CLI) shows by calling what the flag calls."""


def value_forms(value: str) -> set[str]:
    """How a test may hold an option's value: as given, the last part of a path, or decoded from JSON (a
    string, or an object as a dict literal)."""
    forms = {value, Path(value.rstrip("/")).name}
    with contextlib.suppress(ValueError):
        decoded = json.loads(value)
        forms.add(decoded if isinstance(decoded, str) else json.dumps(decoded, sort_keys=True))
    return forms


def unrun_by(line: str, node_id: str) -> list[str]:
    """What of the command line the named test's code does not hold (the subcommand, an option: as the
    option's literal, or as its value where the test drives the library), or that there is no such test."""
    held = code_of(node_id)
    if held is None:
        return [f"no test {node_id}"]
    words = shlex.split(line)[1:]
    missing = [
        word
        for word in [w for w in words[:2] if not w.startswith("-")][: 2 if words[0] == "lab" else 1]
        if word not in held and not any(p.startswith(word) for name in held for p in re.split(r"[_\W]", name))
    ]
    for i, word in enumerate(words):
        if not word.startswith("-"):
            continue
        option, _, inline = word.partition("=")
        value = inline or (words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("-") else "")
        keyword = option.lstrip("-").replace("-", "_") + "="  # `soak(lab, invocations=200)`
        if {option, keyword, FLAG_IN_API.get(option)} & held or (value and value_forms(value) & held):
            continue
        missing.append(option)
    return missing


def unaccounted(page: Path, run_by: dict[str, str]) -> list[str]:
    """The commands of a page neither run by the test run_by names (with its subcommand and options) nor
    illustrative with a reason."""
    text = page.read_text()
    missing = [
        f"{line}: illustrative without a reason in its code block"
        for line in illustrative_without_a_reason(text)
    ]
    for line in command_lines(text):
        if has_placeholder(line):
            continue
        if line not in run_by:
            missing.append(f"{line}: run by no test in tests/docs/run_by.py and no placeholder")
        elif unrun := unrun_by(line, run_by[line]):
            missing.append(f"{line}: {run_by[line]} does not hold {unrun}")
    return missing


@pytest.mark.parametrize("page", how_to_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_of_a_how_to_is_run_by_a_test_or_illustrative(page: Path) -> None:
    assert unaccounted(page, RUN_BY) == []


def test_every_line_of_the_run_by_table_is_shown_on_a_page() -> None:
    """A line the pages no longer show is a stale entry: its command changed and its test may not follow."""
    shown_lines = {line for page in how_to_pages() for line in command_lines(page.read_text())}
    assert sorted(set(RUN_BY) - shown_lines) == []


def test_a_new_command_on_a_how_to_without_a_test_or_a_reason_is_caught(tmp_path: Path) -> None:
    page = tmp_path / "new.md"
    page.write_text("```bash\npaidtwice sweep --mode journaled --check\n```\n")
    assert unaccounted(page, RUN_BY) == [
        "paidtwice sweep --mode journaled --check: run by no test in tests/docs/run_by.py and no placeholder"
    ]
    smoke = "tests/cli/test_smoke.py::test_sweep_of_the_journaled_agent_passes_its_check"
    assert unaccounted(page, {"paidtwice sweep --mode journaled --check": smoke}) == []
    # A test that exists but does not run the option the page shows, or a test that does not exist
    page.write_text("```bash\npaidtwice sweep --mode journaled --check --wide\n```\n")
    assert unaccounted(page, {"paidtwice sweep --mode journaled --check --wide": smoke}) == [
        f"paidtwice sweep --mode journaled --check --wide: {smoke} does not hold ['--wide']"
    ]
    gone = "tests/cli/test_smoke.py::test_no_such_test"
    assert unaccounted(page, {"paidtwice sweep --mode journaled --check --wide": gone}) == [
        f"paidtwice sweep --mode journaled --check --wide: {gone} does not hold ['no test {gone}']"
    ]
    # A placeholder makes it illustrative only with a reason the reader sees
    page.write_text("```bash\npaidtwice journal INVOCATION_ID --admin-url ADMIN_URL\n```\n")
    assert unaccounted(page, {}) == [
        "paidtwice journal INVOCATION_ID --admin-url ADMIN_URL: "
        "illustrative without a reason in its code block"
    ]
    page.write_text(
        "```bash\n# your production Restate's admin API\n"
        "paidtwice journal INVOCATION_ID --admin-url ADMIN_URL\n```\n"
    )
    assert unaccounted(page, {}) == []


def test_a_quoted_input_is_not_a_placeholder() -> None:
    assert not has_placeholder("""paidtwice sweep --input '"How much is 120 EUR in USD?"'""")
    assert has_placeholder("paidtwice journal INVOCATION_ID")
    assert has_placeholder("paidtwice report RESULTS.json...")
