"""Static check of Restate handlers for the calls a replay pays for twice (`paidtwice lint`)."""

from paidtwice.lint._analyzer import Finding, LintResult, lint_paths, lint_source
from paidtwice.lint._rules import CODES, Rule

__all__ = ["CODES", "Finding", "LintResult", "Rule", "lint_paths", "lint_source"]
