"""What CI shows: the results of lint, a sweep and a replay-check as findings on lines and as test cases.

A `Finding` is one thing that fails, placed on a file's line (a lint finding on its call; a crash point
that pays twice, a journal that diverges, a broken budget on the handler's definition). A `TestCase` is one
check that passed or failed (a crash point, a journal, a lint run). The three CI formats are written from
them: SARIF (`_sarif`), JUnit XML (`_junit`), GitHub workflow commands (`_github`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from paidtwice._words import count
from paidtwice.lint import CODES
from paidtwice.lint import Finding as LintFinding
from paidtwice.report._coverage import not_reached, reached
from paidtwice.results import PointResult, ReplayResult

__all__ = [
    "RULES",
    "Finding",
    "Level",
    "Rule",
    "Source",
    "TestCase",
    "budget_finding",
    "lint_cases",
    "lint_findings",
    "replay_cases",
    "replay_findings",
    "sweep_cases",
    "sweep_findings",
]

Level = Literal["error", "warning", "note"]

Source = Callable[[str, str], "tuple[str, int] | None"]
"""Where SERVICE/HANDLER is defined: (path, line), or None when it is not known."""


@dataclass(frozen=True)
class Rule:
    """One kind of finding, as SARIF's rules describe it."""

    id: str
    """The stable id ("PT001", "PT101")."""
    name: str
    """What it finds, in a few words."""
    help: str
    """What to do about it."""


_CHECK_RULES = (
    Rule(
        "PT101",
        "a crash point pays again for completed work",
        "a kill at this moment made the replay pay again for a model call or a step that had completed: "
        "journal the call (`await ctx.run_typed(...)`), as `paidtwice lint` shows where",
    ),
    Rule(
        "PT102",
        "a crash point is undecided: its kill did not land where it says",
        "paidtwice cannot decide this point: after its retries the kill still landed elsewhere (often a "
        "pause shorter than the machine needs to kill inside it), or its replay could not finish; the "
        "point's record says where it landed and why. It fails the check unless --allow-undecided (or "
        "allow-undecided = true in [tool.paidtwice]) is given",
    ),
    Rule(
        "PT201",
        "a journal does not replay against the code",
        "the code now does something else at this index of a captured journal: invocations in flight "
        "when it is deployed will fail to replay; keep the old order, or version the handler",
    ),
    Rule(
        "PT202",
        "a journal's replay could not be decided",
        "the replay failed or timed out before a verdict; the record gives the SDK's message",
    ),
    Rule(
        "PT301",
        "a budget of [tool.paidtwice.budget] is broken",
        "the measured figure is above the budget the project set: journal the repaid calls, or change "
        "the budget in pyproject.toml",
    ),
)

RULES: dict[str, Rule] = {
    **{code: Rule(code, rule.kind, rule.fix) for code, rule in CODES.items()},
    **{rule.id: rule for rule in _CHECK_RULES},
}
"""Every rule a finding may name: lint's codes, then the sweep's, the replay-check's and the budgets'."""


@dataclass(frozen=True)
class Finding:
    """One thing that fails, on a line."""

    rule: str
    """Its rule's id, a key of `RULES`."""
    level: Level
    """error (it fails the check) or warning (paidtwice could not decide)."""
    message: str
    """What was found, in one line."""
    path: str | None
    """The file, relative to the project when under it; None when no file is known."""
    line: int | None
    """1-based line in `path`."""
    col: int | None = None
    """1-based column, when known."""


@dataclass(frozen=True)
class TestCase:
    """One check, as JUnit XML reports it."""

    __test__ = False  # not a pytest test class, whatever its name

    suite: str
    """The suite it belongs to ("sweep Travel/quote steady", "replay-check", "lint")."""
    name: str
    """The case ("#3 in flight: model call 1", a journal's file)."""
    failure: str | None
    """Why it failed; None when it passed."""
    skipped: str | None = None
    """Why it could not be decided; None when it was."""
    time: float = 0.0
    """Seconds it took."""
    properties: tuple[tuple[str, str], ...] = ()
    """(name, value) pairs JUnit lists under the case (a crash point's retries)."""


def relative(path: str | None, root: Path) -> str | None:
    """`path` relative to `root` when under it (as CI systems place findings), else as given."""
    if path is None:
        return None
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        return path


def lint_findings(findings: Iterable[LintFinding], root: Path) -> list[Finding]:
    return [
        Finding(
            f.code,
            "error",
            f"{f.message}; fix: {f.fix}",
            relative(f.path, root),
            f.line,
            f.col,
        )
        for f in findings
    ]


def lint_cases(findings: Sequence[LintFinding], root: Path, paths: Sequence[str]) -> list[TestCase]:
    """A case per finding, failed; a passing case per linted path when it has none."""
    cases = [
        TestCase("lint", f"{relative(f.path, root)}:{f.line}: {f.code}", f"{f.code} {f.message}")
        for f in findings
    ]
    clean = [p for p in paths if not any(str(f.path).startswith(str(p)) for f in findings)]
    return cases + [TestCase("lint", str(p), None) for p in clean]


def _where(point_service: str, point_handler: str, source: Source | None) -> tuple[str | None, int | None]:
    found = source(point_service, point_handler) if source is not None else None
    return (found[0], found[1]) if found is not None else (None, None)


def sweep_findings(
    points: Iterable[PointResult], source: Source | None, *, allow_undecided: bool = False
) -> list[Finding]:
    """A finding per point that pays twice, and per point undecided (its kill did not land after its
    retries, or its replay could not finish): an error, a warning with `allow_undecided`."""
    found = []
    for p in points:
        path, line = _where(p.service, p.handler, source)
        where = f"{p.swept}, script {p.script}, #{p.order} {p.crash_point}"
        if p.pays_twice:
            paid = (
                f"{count(p.calls_paid_again, 'model call')} and {count(p.step_runs_paid_again, 'step run')} "
                "paid again, beyond those cut off in flight"
            )
            found.append(Finding("PT101", "error", f"{where}: paid twice ({paid})", path, line))
        elif not p.confirmed:
            level: Level = "warning" if allow_undecided else "error"
            found.append(Finding("PT102", level, f"{where}: undecided: {undecided(p)}", path, line))
    return found


def undecided(point: PointResult) -> str:
    """Why a point is undecided, with its retries, in one line."""
    tries = f" after {count(point.retries, 'retry', 'retries')}" if point.retries else ""
    why = point.not_placed or "the kill did not land where the point says"
    return f"could not place the kill{tries}, because {why}"


def landed(point: PointResult) -> str:
    """Whether the kill landed at the point's moment: "yes", "yes, try 2" (after a retry), or "NO"."""
    if not point.confirmed:
        return "NO"
    return f"yes, try {point.retries + 1}" if point.retries else "yes"


def undecided_lines(points: Sequence[PointResult]) -> list[str]:
    """A line per point without a verdict: its kill not placed (with its retries), or a call of its clean
    run the wire could not place (`PointResult.undecided`)."""
    return [
        f"  #{p.order} {p.crash_point!r}: {undecided(p)}" for p in points if not p.confirmed and p.not_placed
    ] + [f"  #{p.order} undecided: {p.undecided}" for p in points if p.undecided]


def sweep_cases(points: Iterable[PointResult], *, allow_undecided: bool = False) -> list[TestCase]:
    """A case per point: failed when it pays twice, and when it is undecided (skipped with
    `allow_undecided`); its retries as a property."""
    cases, points = [], list(points)
    for p in points:
        failure = None
        if p.pays_twice:
            failure = (
                f"paid twice for completed work: {p.extra_model_calls:+d} model calls "
                f"({p.model_calls_in_flight} in flight at the kill), {p.extra_step_runs:+d} step runs "
                f"({p.steps_in_flight} in flight, {p.step_runs_paid_again} run again beyond them), "
                f"{p.answers_asked_again} answers asked again"
            )
        skipped = None
        if not p.confirmed and failure is None:
            if allow_undecided:
                skipped = f"undecided: {undecided(p)}"
            else:
                failure = f"undecided: {undecided(p)} (--allow-undecided passes it)"
        cases.append(
            TestCase(
                f"sweep {p.swept} {p.script}",
                f"#{p.order} {p.crash_point}",
                failure,
                skipped,
                p.wall_time,
                (("retries", str(p.retries)),),
            )
        )
    for name, coverage in reached(points).items():
        # Not a failure of the agent: what the sweep did not check, said where CI shows skipped cases.
        cases.append(TestCase(f"sweep {name} coverage", "reached", None, not_reached(coverage) or None))
    return cases


def replay_findings(results: Iterable[ReplayResult], source: Source | None) -> list[Finding]:
    found = []
    for r in results:
        if r.ok:
            continue
        path, line = _where(r.service, r.handler, source)
        name = r.path or r.invocation_id
        if r.verdict == "diverges":
            message = f"{name} diverges at index {r.index}: recorded {r.recorded}, attempted {r.attempted}"
            found.append(Finding("PT201", "error", message, path, line))
        else:
            first = r.message.splitlines()[0] if r.message else ""
            found.append(Finding("PT202", "error", f"{name}: {r.verdict}: {first}", path, line))
    return found


def replay_cases(results: Iterable[ReplayResult]) -> list[TestCase]:
    return [
        TestCase("replay-check", r.path or r.invocation_id, None if r.ok else r.describe()) for r in results
    ]


def budget_finding(message: str, service: str, handler: str, source: Source | None) -> Finding:
    path, line = _where(service, handler, source)
    return Finding("PT301", "error", message, path, line)
