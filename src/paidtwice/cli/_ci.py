"""The CI outputs `check`, `lint`, `sweep` and `replay-check` share: --sarif FILE, --junit FILE and
--format github (workflow-command annotations on stdout)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from paidtwice._exceptions import UsageError
from paidtwice.cli._options import Option, grouped, writable
from paidtwice.report import Finding, Source, TestCase, github_annotations, relative, write_junit, write_sarif
from paidtwice.targets import discover

__all__ = ["CiOutputs", "app_source", "ci_outputs"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class CiOutputs:
    """Where a command writes what CI shows, built once from its options."""

    sarif: Path | None
    """The SARIF 2.1.0 file, or None."""
    junit: Path | None
    """The JUnit XML file, or None."""
    github: bool
    """Print GitHub Actions annotations."""

    def check(self) -> None:
        """Refuse, before anything runs, a file that could not be written."""
        writable(self.sarif, "the SARIF log")
        writable(self.junit, "the JUnit XML")

    def emit(self, findings: Sequence[Finding], cases: Sequence[TestCase]) -> None:
        if self.sarif is not None:
            write_sarif(self.sarif, findings)
            click.echo(f"SARIF: {self.sarif}", err=True)
        if self.junit is not None:
            write_junit(self.junit, cases)
            click.echo(f"JUnit XML: {self.junit}", err=True)
        if self.github:
            for line in github_annotations(findings):
                click.echo(line)


def _ci_options(*, format_option: bool = True) -> Callable[[F], F]:
    """--sarif FILE and --junit FILE (and --format text|github, unless the command has a --format)."""

    def decorate(f: F) -> F:
        f = click.option(
            "--junit",
            "junit_path",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            metavar="FILE",
            help="Also write JUnit XML here (a test case per crash point, journal or finding).",
        )(f)
        f = click.option(
            "--sarif",
            "sarif_path",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            metavar="FILE",
            help="Also write a SARIF 2.1.0 log here (findings on the lines, rule ids and help), for code "
            "scanning.",
        )(f)
        if format_option:
            f = click.option(
                "--format",
                "output_format",
                type=click.Choice(["text", "github"]),
                default="text",
                show_default=True,
                help="github: also print GitHub Actions annotations (::error file=...,line=...::...).",
            )(f)
        return f

    return decorate


def ci_outputs(*, format_option: bool = True) -> Option:
    """`_ci_options`, handed to the command as `outputs`: its `CiOutputs`, checked before anything runs."""

    def outputs(sarif_path: Path | None, junit_path: Path | None, output_format: str = "text") -> CiOutputs:
        built = CiOutputs(sarif_path, junit_path, github=output_format == "github")
        built.check()
        return built

    return grouped("outputs", outputs, [_ci_options(format_option=format_option)])


def app_source(app: str | None, app_dir: Path, root: Path) -> Source | None:
    """Where each handler of `app` is defined, relative to `root`, read from the app; None without an app
    or when the app cannot say (the findings then carry no line)."""
    if app is None:
        return None
    try:
        handlers = {(h.service, h.handler): h for h in discover(app, cwd=str(app_dir.resolve()))}
    except UsageError:
        return None

    def source(service: str, handler: str) -> tuple[str, int] | None:
        found = handlers.get((service, handler))
        if found is None or found.path is None or found.line is None:
            return None
        return relative(found.path, root) or found.path, found.line

    return source
