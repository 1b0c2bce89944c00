"""The commands that run the deck's rows on a lab: `provision`, `experiments`, `deck` and `run`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from paidtwice._words import count
from paidtwice.cli._errors import errors
from paidtwice.cli._options import (
    check_outputs,
    cluster_option,
    echo_err,
    html_option,
    json_option,
    model_latency_option,
    open_lab,
    output_width,
    price_model_option,
    records_option,
    results_dir_option,
    save_journals_option,
    server_version_option,
    wide_option,
    write_report,
)
from paidtwice.deck import (
    COMPARISONS,
    CURVES,
    EXPERIMENTS,
    WALKS,
    Deck,
    Row,
    experiment_by_name,
    with_model_latency,
)
from paidtwice.lab import Lab
from paidtwice.replay import save_record_journals
from paidtwice.report import (
    curve_svg,
    deck_sections,
    fit_lines,
    format_comparison,
    format_curve,
    format_deck_table,
    format_run,
    format_walk,
)
from paidtwice.results import ComparisonRecord, CurveRecord, Record, RecordSink, RunRecord

__all__ = ["deck", "experiments", "provision", "run"]


@click.command("provision")
@server_version_option
def provision(server_version: str) -> None:
    """Install restate-server, restatectl and Node.js 22 from npm into paidtwice's cache (done on first use
    anyway).

    \b
    Example:
        paidtwice provision --server-version 1.7.10
    """
    from paidtwice.engine import ensure_node_binary, ensure_restatectl, ensure_server_binary

    with errors():
        binary = ensure_server_binary(server_version, echo=echo_err)
        restatectl = ensure_restatectl(echo=echo_err)
        # Node 22 for TypeScript agents (sweep --cmd puts it first on the command's PATH).
        node = ensure_node_binary(echo=echo_err)
    # stdout is the server's path alone (scripts/setup.sh reads it); the others are said on stderr, in words.
    click.echo(str(binary))
    echo_err(f"paidtwice: restatectl installed at {restatectl}")
    echo_err(f"paidtwice: Node.js installed at {node}")


@click.command("experiments")
@wide_option
def experiments(wide: bool) -> None:
    """List the deck's experiments: agent mode, stub script, fault, and what the deck reports.

    \b
    Example:
        paidtwice experiments
    """
    # A row's line wrapped in a narrow terminal continues under its "deck:" line.
    click.echo(fit_lines(experiments_listing(), output_width(wide), hang=" " * 27))


def experiments_listing() -> str:
    """Every row of the deck, two lines each: what it runs, then what the deck reports."""
    lines = []
    for row in EXPERIMENTS:
        lines.append(f"{row.name:26} {row.mode:9} {row.script:9} {row.fault.describe()}")
        lines.append(f"{'':26} deck: {row.deck_says}")
    for curve in CURVES:
        if curve.policies:
            attempts = ", ".join(dict.fromkeys(str(p.max_attempts) for p in curve.policies))
            then = "/".join(dict.fromkeys(p.on_max_attempts for p in curve.policies))
            varies = f"max_attempts {attempts}, then {then}; delay {curve.base.restart_delay:g} s"
        else:
            varies = "delays " + ", ".join(f"{d:g}" for d in curve.delays) + " s"
        lines.append(f"{curve.name:26} {curve.base.mode:9} {curve.base.script:9} {varies}")
        lines.append(f"{'':26} deck: {curve.deck_says}")
    for walk in WALKS:
        lines.append(f"{walk.name:26} recover {walk.base.name}'s paused invocation; fix: {walk.fix_mode}")
        lines.append(f"{'':26} deck: {walk.deck_says}")
    for pair in COMPARISONS:
        sides = " vs ".join(run.name for run in pair.runs())
        lines.append(f"{pair.name:26} {sides}, {pair.first.fault.describe()}")
        lines.append(f"{'':26} beyond the deck: {pair.deck_says}")
    return "\n".join(lines)


@click.command("deck")
@click.option("--only", "only", multiple=True, metavar="NAME", help="Run only these experiments.")
@records_option(
    "Where the full records are written, after each finished run (default: RESULTS_DIR/deck-TIME-PID.json).",
    stem="deck",
)
@click.option("--serial", is_flag=True, help="One run at a time instead of all at once.")
@html_option()
@save_journals_option
@server_version_option
@cluster_option
@price_model_option
@wide_option
def deck(
    only: tuple[str, ...],
    sink: RecordSink,
    serial: bool,
    html_path: Path | None,
    save_journals: Path | None,
    server_version: str,
    price_model: str,
    cluster: int,
    wide: bool,
) -> None:
    """Run the deck's experiments on a real Restate server and compare with the deck's figures.

    Exit status 0 when every run matches the deck, 1 when one does not, 2 on bad input.

    \b
    Examples:
        paidtwice deck
        paidtwice deck --only clean --only naive-kill-in-pause --json out/deck.json
        paidtwice deck --html deck.html
        paidtwice deck --cluster 3
    """
    rows = _rows(only)
    check_outputs(sink.path, html_path, journals=save_journals)
    with errors():
        where = f"a {cluster}-node cluster of " if cluster > 1 else ""
        echo_err(f"paidtwice: {count(len(rows), 'experiment')} on {where}restate-server {server_version}")
        with open_lab(server_version=server_version, price_model=price_model, cluster=cluster) as lab:
            records = _run_rows(lab, rows, sink=sink, serial=serial, journals=save_journals)
    width = output_width(wide)
    click.echo(format_deck_table(records, width=width))
    for record in records:
        if not isinstance(record, RunRecord):
            click.echo(f"\n{record.name}:")
            click.echo(_format_record(record, width))
    click.echo(f"\nFull records: {sink.path}")
    write_report(html_path, "paidtwice deck", deck_sections(records), [sink.path])
    sys.exit(0 if all(r.matches for r in records) else 1)


@click.command("run")
@click.argument("name")
@json_option("Where the record is written (default: RESULTS_DIR/NAME-TIME-PID.json).")
@results_dir_option
@html_option()
@save_journals_option
@server_version_option
@cluster_option
@price_model_option
@model_latency_option
@wide_option
def run(
    name: str,
    json_path: Path | None,
    results_dir: Path,
    html_path: Path | None,
    save_journals: Path | None,
    server_version: str,
    price_model: str,
    model_latency: float | None,
    cluster: int,
    wide: bool,
) -> None:
    """Run one experiment and print its journal by index and its model-call log.

    \b
    Examples:
        paidtwice run naive-kill-in-pause
        paidtwice run naive-changed-for-good --json changed.json --html changed.html
        paidtwice run node-kill-in-pause --cluster 3
    """
    row = _rows((name,))[0]
    if model_latency is not None:
        row = with_model_latency(row, model_latency)
    sink = RecordSink.at(json_path, results_dir=results_dir, stem=name)
    check_outputs(sink.path, html_path, journals=save_journals)
    with errors():
        with open_lab(server_version=server_version, price_model=price_model, cluster=cluster) as lab:
            records = _run_rows(lab, [row], sink=sink, serial=True, journals=save_journals)
    for record in records:
        click.echo(_format_record(record, output_width(wide)))
    click.echo(f"\nFull record: {sink.path}")
    write_report(html_path, f"paidtwice run {name}", deck_sections(records), [sink.path])
    sys.exit(0 if all(r.matches for r in records) else 1)


def _format_record(record: Record, width: int | None) -> str:
    """A record as `run` prints it, fitted to `width` columns (None: full width)."""
    if isinstance(record, RunRecord):
        return format_run(record, width=width)
    if isinstance(record, CurveRecord):
        return format_curve(record, width=width)
    if isinstance(record, ComparisonRecord):
        return format_comparison(record, width=width)
    return format_walk(record, width=width)


def _rows(names: tuple[str, ...]) -> list[Row]:
    if not names:
        return [*EXPERIMENTS, *CURVES, *WALKS, *COMPARISONS]
    with errors():
        return [experiment_by_name(name) for name in names]


def _run_rows(
    lab: Lab, rows: list[Row], *, sink: RecordSink, serial: bool, journals: Path | None = None
) -> list[Record]:
    """The rows run on `lab`, each record on disk once its run finished, then all in the deck's order."""
    sink.replace([])

    def save(record: Record) -> None:
        sink.add(record)
        if journals is not None:
            save_record_journals(lab.sql, journals, record)
        verdict = "matches" if record.matches else "DIFFERS from the deck"
        echo_err(f"  finished {record.name}: {verdict}")
        if isinstance(record, CurveRecord):
            svg = curve_svg(record, sink.path.with_name(f"{sink.path.stem}-{record.name}.svg"))
            echo_err(f"  plot of {record.name}: {svg}")

    with sink:
        ordered = Deck(lab).run_rows(rows, concurrent=not serial, on_record=save)
        sink.replace(ordered)
    return ordered
