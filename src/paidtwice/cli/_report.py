"""`paidtwice report`: one self-contained HTML page from result files."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from paidtwice._words import count
from paidtwice.cli._bad_input import BadInput
from paidtwice.cli._errors import errors
from paidtwice.cli._options import allow_undecided_option, write_report
from paidtwice.report import format_handler_summary, results_sections
from paidtwice.results import KillsPlaced, PointResult, ReplayResult, load_results

__all__ = ["report"]


@click.command("report")
@click.argument(
    "results",
    nargs=-1,
    required=True,
    # Directories are let through to the reader, which says in one line what to give instead.
    type=click.Path(path_type=Path),
    metavar="RESULTS.json...",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The HTML file to write (default: the first results file with .html).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Exit 1 when a crash point pays twice or is undecided (unless --allow-undecided), or a journal "
    "does not replay (the verdict over every file given: shards of one sweep merge into one).",
)
@allow_undecided_option
def report(results: tuple[Path, ...], output: Path | None, check: bool, allow_undecided: bool) -> None:
    """Make one self-contained HTML report from result files (--json of deck, run, sweep, soak, replay-check,
    watch).

    The page has the deck-against-measured table with verdicts; per run a timeline (attempts, the kill and
    the down time, model calls delivered or cut off, journal entries), the journal by index, the mismatch
    and the admin log; the restart-delay curve measured against predicted; for a sweep, a heatmap of crash
    points against mode and script, each cell linking to that point's timeline; for a replay-check, a row
    per journal with its verdict, a divergence as the recorded and attempted commands side by side; a soak's
    counts, bound and kills; a watch snapshot's stuck invocations, their cost and ways out. Inline CSS and
    SVG, no request: it opens from disk and prints to PDF. Exit 2 on a file that is not a paidtwice result
    or is of an older format.

    \b
    Examples:
        paidtwice report paidtwice-results/deck-20261204-120000-4242.json -o deck.html
        paidtwice report deck.json sweep.json -o ci-report.html
        paidtwice report replay-check.json -o replay-check.html
        paidtwice report paidtwice-results/soak-20261204-120000-4242.json -o soak.html
        paidtwice report watch.json -o stuck-now.html
        paidtwice report shard-1.json shard-2.json --check -o sweep.html    # a sharded sweep, one verdict
    """
    output = output or results[0].with_suffix(".html")
    if any(output.resolve() == r.resolve() for r in results):
        raise BadInput(
            f"{output} is one of the results files; the page would overwrite it (give -o NAME.html)"
        )
    with errors():
        loaded = load_results(results)
    sections, kinds = results_sections(loaded)
    write_report(output, f"paidtwice report: {' and '.join(kinds)}", sections, list(results))
    failed = _verdict(loaded.points, loaded.replays, len(results), allow_undecided=allow_undecided)
    if check and failed:
        sys.exit(1)


def _verdict(
    points: Sequence[PointResult],
    replays: Sequence[ReplayResult],
    files: int,
    *,
    allow_undecided: bool = False,
) -> bool:
    """Print one verdict over every file's points and journals (a line per handler first); True when
    something pays twice, is undecided (unless `allow_undecided`) or does not replay."""
    if points:
        click.echo(format_handler_summary(points))
    twice = [p for p in points if p.pays_twice]
    missed = [p for p in points if not p.confirmed]
    diverged = [r for r in replays if not r.ok]
    parts = []
    if points:
        parts.append(
            f"{count(len(points), 'crash point')}: "
            + (f"{len(twice)} pay twice" if twice else "none pays twice")
        )
        parts.append(KillsPlaced.of(points).words())
        if missed:
            named = ", ".join(f"{p.swept}/{p.script} #{p.order} {p.crash_point}" for p in missed)
            allowed = ", allowed" if allow_undecided else ""
            parts.append(f"{count(len(missed), 'point')} undecided{allowed} ({named})")
    if replays:
        parts.append(
            f"{count(len(replays), 'journal')}: "
            + (f"{len(diverged)} do not replay" if diverged else "every one replays")
        )
    if parts:
        click.echo(f"verdict over {count(files, 'file')}: " + "; ".join(parts))
    return bool(twice or (missed and not allow_undecided) or diverged)
