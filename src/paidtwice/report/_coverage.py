"""What a sweep reached and what it did not, per swept handler, over every run of it (clean runs' paths are
every point's too): the tools the model was offered and those the stub's answers called, the hosted tools no
answer can call, the waits the sweep resolved, the handlers of its tree that ran, in words (the page's
paragraph is `_html_sweep`'s, the JUnit case `_findings`')."""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence

from paidtwice._words import count
from paidtwice.results import Coverage, PointResult

__all__ = ["coverage_lines", "not_reached", "reached"]


def reached(points: Sequence[PointResult]) -> dict[str, Coverage]:
    """Each swept handler's coverage, over all its points (every variation)."""
    by: dict[str, list[Coverage]] = {}
    for p in points:
        by.setdefault(p.swept, []).append(p.coverage)
    return {name: functools.reduce(operator.or_, found, Coverage()) for name, found in by.items()}


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names)


def coverage_lines(coverage: Coverage) -> list[str]:
    """What was reached, then what was not, in a line each ("" parts left out)."""
    got = []
    if coverage.tools_offered:
        got.append(
            f"tools called {_listed(coverage.tools_called) or 'none'} "
            f"(of {count(len(coverage.tools_offered), 'tool')} offered)"
        )
    if coverage.waits_resolved:
        got.append(f"resolved {_listed(coverage.waits_resolved)}")
    if len(coverage.handlers_ran) > 1:
        got.append(f"handlers of its tree that ran: {_listed(coverage.handlers_ran)}")
    lines = [f"reached: {'; '.join(got) or 'no tool offered, no wait, no other handler'}"]
    missed = not_reached(coverage)
    if missed:
        lines.append(f"not reached: {missed}")
    return lines


def not_reached(coverage: Coverage) -> str:
    """What the sweep did not reach, in words; "" when it reached everything it saw offered."""
    missed = []
    if coverage.tools_not_called:
        missed.append(
            f"tools no answer called: {_listed(coverage.tools_not_called)} (what follows them is not swept; "
            "--every-tool reaches those a conversation's first turn offers, a script file that calls them "
            "any)"
        )
    if coverage.hosted_tools:
        missed.append(
            f"hosted tools the stub cannot call: {_listed(coverage.hosted_tools)} (the provider runs them; "
            "what follows them is not swept)"
        )
    if coverage.waits_unresolved:
        missed.append(f"waits nothing resolved: {_listed(coverage.waits_unresolved)}")
    return "; ".join(missed)
