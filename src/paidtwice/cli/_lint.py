"""`paidtwice lint PATH ...`: one finding a line, exit 1 on findings, 0 on none, 2 on bad input.

A thin layer over the library `paidtwice.lint`, which knows nothing of click.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import click

from paidtwice._words import count
from paidtwice.cli._bad_input import BadInput
from paidtwice.cli._ci import CiOutputs, ci_outputs
from paidtwice.lint import (
    CODES,
    OFF_BY_DEFAULT,
    LintResult,
    Parser,
    lint_paths,
    parse_version,
    project_target,
    typescript_file,
)
from paidtwice.report import lint_cases, lint_findings

__all__ = ["lint_command"]


@click.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "output",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="text: path:line:col: CODE message; json: a list of findings with their fix; github: GitHub "
    "Actions annotations (::error file=...,line=...::...).",
)
@click.option("--codes", "show_codes", is_flag=True, help="List the codes with what each finds and its fix.")
@click.option(
    "--select",
    "select",
    multiple=True,
    metavar="CODE[,CODE]",
    help="Report only these codes (default: all but PT006, which is off unless selected).",
)
@click.option(
    "--target-version",
    "target_version",
    metavar="3.N",
    default=None,
    help="The Python the project targets, whose syntax its Python files are parsed with (default: the lower "
    "bound of requires-python in the nearest pyproject.toml). A file this Python cannot parse is parsed by a "
    "newer python3.N on PATH; if the target is newer and none is found, the file is reported as not checked.",
)
@ci_outputs(format_option=False)
def lint_command(
    paths: tuple[Path, ...],
    output: str,
    show_codes: bool,
    select: tuple[str, ...],
    outputs: CiOutputs,
    target_version: str | None,
) -> None:
    """Find the calls in Restate handlers that a replay makes, and pays for, again.

    Reports network and model calls, clock reads, randomness and fresh ids, environment and file reads made
    in a handler (or a function it calls) outside the action of ctx.run / ctx.run_typed. Reads Python
    (*.py) and TypeScript (*.ts, *.tsx, *.mts, *.cts) with the same codes. `# noqa: CODE` (`// noqa: CODE`
    in TypeScript) on the line silences one code there. Exit 1 when there are findings, 0 when none, 2 on
    bad input.

    \b
    Examples:
        paidtwice lint src/
        paidtwice lint src/agent.ts             # a Restate TypeScript agent
        paidtwice lint agent.py --format json
        paidtwice lint --select PT006 src/     # HTTP writes in ctx.run actions without a key
        paidtwice lint --target-version 3.12 src/
        paidtwice lint --codes
        paidtwice lint src/ --sarif lint.sarif --junit lint.xml --format github
    """
    # lint's --format is its own (text, json or github): the annotations are asked for there.
    outputs = replace(outputs, github=output == "github")
    if show_codes:
        _list_codes()
        return
    codes = _selected(select)
    _check_paths(paths)
    result = _lint(list(paths), codes, _parser(list(paths), target_version))
    for where, reason in result.unchecked:
        click.echo(f"{where}: {reason}", err=True)
    # What lint cannot judge is said, with why; it is not a finding, and the exit status does not count it.
    for where, line, why in result.undecided:
        click.echo(f"{where}:{line}: not decided: {why}", err=True)
    root = Path.cwd()
    outputs.emit(
        lint_findings(result.findings, root), lint_cases(result.findings, root, [str(p) for p in paths])
    )
    _print(result, output)
    # A file not checked is not passed: exit 1, as for a finding.
    if result.findings or result.unchecked:
        raise SystemExit(1)


def _list_codes() -> None:
    for rule in CODES.values():
        off = " (off by default: --select it)" if rule.code in OFF_BY_DEFAULT else ""
        click.echo(f"{rule.code}  {rule.kind}{off}\n       fix: {rule.fix}")


def _selected(select: tuple[str, ...]) -> set[str]:
    """The codes --select names (each may hold several, comma-separated); BadInput on an unknown one."""
    codes = {c.strip().upper() for item in select for c in item.split(",") if c.strip()}
    unknown = sorted(codes - set(CODES))
    if unknown:
        raise BadInput(f"unknown code {unknown[0]} (known: {', '.join(CODES)})")
    return codes


def _check_paths(paths: tuple[Path, ...]) -> None:
    if not paths:
        raise BadInput("give at least one file or directory to lint")
    for path in paths:
        if Path(path).is_file() and not _python_file(Path(path)) and not typescript_file(Path(path)):
            raise BadInput(
                f"{path} is neither a Python file (a .py file, or a script whose first line runs python) nor "
                "a TypeScript file (.ts, .tsx, .mts, .cts)"
            )


def _parser(paths: list[Path], target_version: str | None) -> Parser:
    """The parser of --target-version, or of the nearest pyproject.toml's requires-python."""
    if target_version is not None:
        try:
            return Parser(parse_version(target_version))
        except ValueError as err:
            raise BadInput(f"--target-version: {err}") from None
    found = project_target(paths)
    return Parser(*found) if found else Parser()


def _lint(paths: list[Path], codes: set[str], parser: Parser) -> LintResult:
    try:
        result = lint_paths(paths, select=codes or None, parser=parser)
    except FileNotFoundError as err:
        raise BadInput(f"no such file or directory: {err.args[0]}") from None
    if result.files == 0:
        raise BadInput("no Python or TypeScript files under " + ", ".join(str(p) for p in paths))
    return result


def _print(result: LintResult, output: str) -> None:
    """The findings on stdout in the --format asked for (github's go out as annotations), the count on
    stderr."""
    if output == "json":
        records = [
            {
                "path": f.path,
                "line": f.line,
                "col": f.col,
                "code": f.code,
                "message": f.message,
                "fix": f.fix,
            }
            for f in result.findings
        ]
        click.echo(json.dumps(records, indent=2))
        return
    for finding in result.findings if output == "text" else ():
        click.echo(finding.format())
    click.echo(
        f"{count(len(result.findings), 'finding')} in {count(result.files, 'file')}, "
        f"{count(result.handlers, 'Restate handler')}"
        + (f", {count(len(result.undecided), 'call')} not decided" if result.undecided else ""),
        err=True,
    )


def _python_file(path: Path) -> bool:
    """A .py (or .pyi) file, or a script with a python shebang (pre-commit passes those as Python)."""
    if path.suffix in (".py", ".pyi"):
        return True
    with path.open("rb") as file:
        first = file.readline(200)
    return first.startswith(b"#!") and b"python" in first
