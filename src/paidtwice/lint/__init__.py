"""Static check of Restate handlers for the calls a replay pays for twice (`paidtwice lint`)."""

from paidtwice.lint._analyzer import lint_paths, lint_source, typescript_file
from paidtwice.lint._findings import Finding, LintResult
from paidtwice.lint._parse import Parser, parse_version, project_target
from paidtwice.lint._rules import CODES, OFF_BY_DEFAULT, Rule

__all__ = [
    "CODES",
    "OFF_BY_DEFAULT",
    "Finding",
    "LintResult",
    "Parser",
    "Rule",
    "lint_paths",
    "lint_source",
    "parse_version",
    "project_target",
    "typescript_file",
]
