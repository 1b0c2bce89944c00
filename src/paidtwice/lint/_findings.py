"""What lint reports, whatever the language it read: a `Finding` per call, a `LintResult` per run, and the
`# noqa: CODE` (Python) or `// noqa: CODE` (TypeScript) comment that silences a code on its line."""

from __future__ import annotations

import re
from dataclasses import dataclass

from paidtwice.lint._rules import CODES

__all__ = ["Finding", "LintResult", "noqa"]

_NOQA = re.compile(r"(?:#|//)\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


def noqa(line: str, code: str) -> bool:
    """The line silences `code` (a bare `noqa` silences every code)."""
    match = _NOQA.search(line)
    if match is None:
        return False
    codes = match.group("codes")
    return codes is None or code in re.split(r"[\s,]+", codes.upper())


@dataclass(frozen=True)
class Finding:
    """One call a replay makes again."""

    path: str
    """The file, as given (or found under a given directory)."""
    line: int
    """1-based line of the call in the handler (of the error, for PT000)."""
    col: int
    """1-based column."""
    code: str
    """Rule code, see `CODES`."""
    message: str
    """What was found, and through which helper."""

    def format(self) -> str:
        """`path:line:col: CODE message`, the usual linter line."""
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"

    @property
    def fix(self) -> str:
        """How to make the call replay-safe."""
        return CODES[self.code].fix


@dataclass(frozen=True)
class LintResult:
    """Every finding of one run, in path and line order, and how much was read."""

    findings: tuple[Finding, ...]
    """Findings, sorted."""
    files: int
    """Python and TypeScript files read."""
    lines: int
    """Lines read."""
    handlers: int
    """Restate handlers found."""
    unchecked: tuple[tuple[str, str], ...] = ()
    """Files not checked, and why (path, reason): they need a newer parser than the running Python's, or
    TypeScript's parser is not installed."""
    undecided: tuple[tuple[str, int, str], ...] = ()
    """Calls lint cannot judge, and why (path, line, what it cannot decide): an ADK runner whose plugins it
    cannot read, an AI SDK call on a model it cannot follow. Not findings: no exit status depends on them."""
