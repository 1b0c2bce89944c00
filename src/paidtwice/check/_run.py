"""Run what a `Config` names: lint, every sweep (on one lab), the replay-check and the budgets; each gives
its `Outcome`, a line of the summary, with its findings and test cases for the CI formats."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from paidtwice._words import count
from paidtwice.check._config import Budget, Config, ConfigError, SweepConfig
from paidtwice.lab import DEFAULT_PRICE_MODEL, Lab
from paidtwice.lint import Parser, lint_paths, project_target
from paidtwice.replay import Replayer, journal_paths, load_journal
from paidtwice.report import (
    Finding,
    Source,
    TestCase,
    budget_finding,
    lint_cases,
    lint_findings,
    replay_cases,
    replay_findings,
    sweep_cases,
    sweep_findings,
)
from paidtwice.results import KillsPlaced, PointResult, SweepMatrix
from paidtwice.sweep import Answers, KillPlan, Shard, sweep
from paidtwice.targets import TargetSpec

__all__ = [
    "CHECKS",
    "Outcome",
    "check_sweeps",
    "open_check_lab",
    "run_budgets",
    "run_lint",
    "run_replay_check",
    "run_sweeps",
]

CHECKS = ("lint", "sweep", "replay-check")


@dataclass(frozen=True)
class Outcome:
    """One line of `paidtwice check`'s summary: a check of one target."""

    check: str
    """lint, sweep, replay-check or budget."""
    target: str
    """What was checked (paths, SERVICE/HANDLER, the journals)."""
    ok: bool
    """It holds."""
    summary: str
    """What was found, in a few words."""
    findings: tuple[Finding, ...] = ()
    """Its findings, on lines."""
    cases: tuple[TestCase, ...] = ()
    """Its test cases."""
    points: tuple[PointResult, ...] = field(default=(), repr=False)
    """A sweep's points."""

    def line(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'}  {self.check:<12}  {self.target}: {self.summary}"


def run_lint(config: Config, root: Path) -> Outcome:
    paths = list(config.lint)
    # The project's own Python (requires-python), as `paidtwice lint` parses with.
    found = project_target(paths)
    result = lint_paths(paths, select=None, parser=Parser(*found) if found else Parser())
    target = ", ".join(str(_rel(p, root)) for p in paths)
    summary = (
        f"{count(len(result.findings), 'finding')} in {count(result.files, 'file')}, "
        f"{count(result.handlers, 'Restate handler')}"
    )
    if result.unchecked:
        # A file not checked is not passed, as in `paidtwice lint`.
        summary += f"; {count(len(result.unchecked), 'file')} not checked ({result.unchecked[0][1]})"
    return Outcome(
        "lint",
        target,
        not result.findings and not result.unchecked,
        summary,
        tuple(lint_findings(result.findings, root)),
        tuple(lint_cases(result.findings, root, [str(p) for p in paths])),
    )


def run_sweeps(
    config: Config,
    *,
    lab: Lab,
    shard: Shard | None,
    source: Callable[[SweepConfig], Source | None],
    on_point: Callable[[PointResult], None] | None = None,
    allow_undecided: bool = False,
) -> list[Outcome]:
    """Every sweep of the config on one lab; an outcome per swept handler. A point left undecided fails
    its handler's outcome unless `allow_undecided` (or the config's allow-undecided) is set."""
    check_sweeps(config)
    outcomes = []
    for entry in config.sweeps:
        what = TargetSpec(
            app=entry.app,
            service=entry.service,
            handler=entry.handler,
            input=entry.input,
            app_dir=entry.app_dir,
            key=entry.key,
        )
        answers = Answers(
            script=entry.script,
            variations=tuple(entry.variations),
            seed=entry.seed,
            every_tool=entry.every_tool,
        )
        kills = KillPlan(shard=shard, retries=config.retries)
        matrices = sweep(what, answers=answers, kills=kills, lab=lab, on_point=on_point)
        allow = allow_undecided or config.allow_undecided
        outcomes += _sweep_outcomes(matrices, config.budget, shard, source(entry), allow_undecided=allow)
    return outcomes


def check_sweeps(config: Config) -> None:
    """Refuse, before a lab starts, a sweep that cannot run: `ConfigError` naming its key."""
    for i, entry in enumerate(config.sweeps):
        key = f"{config.path.name}: {config.table}.sweep[{i}]"
        if entry.script is not None and not entry.script.is_file():
            raise ConfigError(f"{key}.script: no such file: {entry.script}")
        if not entry.app_dir.is_dir():
            raise ConfigError(f"{key}.app-dir: no such directory: {entry.app_dir}")


def _sweep_outcomes(
    matrices: Sequence[SweepMatrix],
    budget: Budget,
    shard: Shard | None,
    source: Source | None,
    *,
    allow_undecided: bool = False,
) -> list[Outcome]:
    """An outcome per swept handler (and its budgets): it fails on a point that pays twice, and on one left
    undecided unless `allow_undecided`."""
    outcomes = []
    for name in dict.fromkeys(m.mode for m in matrices):
        mine = [m for m in matrices if m.mode == name]
        points = [p for m in mine for p in m.points]
        twice = [p for p in points if p.pays_twice]
        missed = [p for p in points if not p.confirmed]
        summary = f"{count(len(points), 'crash point')}" + (
            f" (shard {shard[0]}/{shard[1]})" if shard else ""
        )
        summary += f", {len(twice)} pay twice" if twice else ", none pays twice"
        placed = KillsPlaced.of(points)
        if placed.retries:
            summary += f", {count(placed.after_retry, 'kill')} placed after a retry"
        if missed:
            named = ", ".join(f"{p.script} #{p.order} {p.crash_point}" for p in missed)
            allowed = ", allowed" if allow_undecided else ""
            summary += f", {count(len(missed), 'point')} undecided{allowed} ({named})"
        outcomes.append(
            Outcome(
                "sweep",
                name,
                not twice and (allow_undecided or not missed),
                summary,
                tuple(sweep_findings(points, source, allow_undecided=allow_undecided)),
                tuple(sweep_cases(points, allow_undecided=allow_undecided)),
                tuple(points),
            )
        )
        outcomes += run_budgets(mine, budget, shard, source)
    return outcomes


def run_budgets(
    matrices: Sequence[SweepMatrix], budget: Budget, shard: Shard | None, source: Source | None
) -> list[Outcome]:
    """The budgets of one handler's matrices; none when the budget is not set."""
    if not matrices:
        return []
    name = matrices[0].mode
    points = [p for m in matrices for p in m.points]
    first = points[0] if points else None
    service, handler = (first.service, first.handler) if first is not None else ("", "")
    outcomes = []
    if budget.repaid_model_calls is not None:
        repaid = max((max(0, p.extra_model_calls - p.model_calls_in_flight) for p in points), default=0)
        ok = repaid <= budget.repaid_model_calls
        summary = f"repaid model calls per crash point {repaid} (budget {budget.repaid_model_calls})"
        findings = () if ok else (budget_finding(f"{name}: {summary}", service, handler, source),)
        case = TestCase("budget", f"{name} repaid-model-calls", None if ok else summary)
        outcomes.append(Outcome("budget", name, ok, summary, findings, (case,)))
    if budget.expected_extra_usd_per_1000 is not None:
        if shard is not None:
            # The expected cost sums every point's share of the run: a shard holds only some of them.
            outcomes.append(
                Outcome(
                    "budget",
                    name,
                    True,
                    "expected-extra-usd-per-1000 not decided in a shard "
                    "(`paidtwice report --check` of every shard's records decides it)",
                )
            )
            return outcomes
        worst = max(mine.cost_per_thousand(budget.crash_rate) for mine in matrices)
        ok = worst <= budget.expected_extra_usd_per_1000
        summary = (
            f"expected extra ${worst:.6f} per 1,000 invocations at {budget.crash_rate:g} crashes "
            f"(budget ${budget.expected_extra_usd_per_1000:g})"
        )
        findings = () if ok else (budget_finding(f"{name}: {summary}", service, handler, source),)
        case = TestCase("budget", f"{name} expected-extra-usd-per-1000", None if ok else summary)
        outcomes.append(Outcome("budget", name, ok, summary, findings, (case,)))
    return outcomes


def run_replay_check(config: Config, root: Path, source: Source | None) -> Outcome:
    replay = config.replay_check
    assert replay is not None
    files = journal_paths([replay.journals])
    target = str(_rel(replay.journals, root))
    if not files:
        return Outcome("replay-check", target, True, "no journal to check yet")
    journals = [load_journal(path) for path in files]
    code = TargetSpec(app=replay.app, app_dir=replay.app_dir).code()
    with Replayer.of(code, script=replay.script, variation=replay.variation) as replayer:
        results = replayer.replay_journals(journals)
    bad = [r for r in results if not r.ok]
    summary = f"{count(len(results), 'journal')}, " + (
        f"{len(bad)} do not replay" if bad else "every one replays"
    )
    return Outcome(
        "replay-check",
        target,
        not bad,
        summary,
        tuple(replay_findings(results, source)),
        tuple(replay_cases(results)),
    )


def _rel(path: Path, root: Path) -> Path:
    try:
        return path.resolve().relative_to(root.resolve())
    except ValueError:
        return path


def open_check_lab(config: Config) -> Lab:
    """The lab every sweep of a check shares."""
    return Lab(price_model=config.price_model or DEFAULT_PRICE_MODEL)
