"""`paidtwice check`: everything a project's `[tool.paidtwice]` names, in one command, as CI runs it."""

from __future__ import annotations

import functools
import sys
from contextlib import ExitStack
from pathlib import Path

import click

from paidtwice.check import (
    CHECKS,
    Config,
    ConfigError,
    Outcome,
    check_sweeps,
    find_config,
    load_config,
    open_check_lab,
    run_lint,
    run_replay_check,
    run_sweeps,
)
from paidtwice.cli._bad_input import BadInput
from paidtwice.cli._ci import CiOutputs, app_source, ci_outputs
from paidtwice.cli._errors import errors
from paidtwice.cli._options import (
    allow_undecided_option,
    echo_err,
    json_option,
    shard_option,
    writable,
)
from paidtwice.results import PointResult, RecordSink

__all__ = ["check"]


@click.command("check")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="The configuration file (default: the nearest paidtwice.toml, or pyproject.toml with a "
    "[tool.paidtwice] table, from the current directory up).",
)
@click.option(
    "--only",
    type=click.Choice(CHECKS),
    multiple=True,
    help="Run only this check (repeatable): lint, sweep or replay-check (budgets go with sweep).",
)
@json_option(
    "Where the sweeps' points are written (default: the config's results-dir/check-TIME-PID.json); "
    "`paidtwice report` reads it, and merges shards' files."
)
@shard_option
@allow_undecided_option
@ci_outputs()
def check(
    config_path: Path | None,
    only: tuple[str, ...],
    json_path: Path | None,
    shard: tuple[int, int] | None,
    allow_undecided: bool,
    outputs: CiOutputs,
) -> None:
    """Run every check the project's [tool.paidtwice] configuration names: lint, every sweep, the
    replay-check of captured journals, and the budgets.

    Prints a line per target and check, then the verdict. Exit 0 when everything holds; 1 when a lint
    finding, a crash point that pays twice, a crash point undecided (its kill not placed after its
    retries, or its replay unable to finish; passed with --allow-undecided or allow-undecided = true in
    the configuration), a journal that does not replay or a broken budget is found; 2 on bad input (a
    wrong configuration is one line naming the file, the key and what was expected).

    \b
    Examples:
        paidtwice check
        paidtwice check --only lint --format github
        paidtwice check --sarif paidtwice.sarif --junit paidtwice.xml
        paidtwice check --only sweep --shard 1/4 --json shard-1.json
        paidtwice report shard-*.json --check -o report.html
    """
    config = _config(config_path)
    root = config.path.parent
    wanted = set(only or CHECKS)
    sink = RecordSink.at(json_path, results_dir=config.results_dir, stem="check")
    outcomes: list[Outcome] = []
    with errors(), ExitStack() as stack:
        if "sweep" in wanted:
            check_sweeps(config)
        if "lint" in wanted:
            try:
                outcomes.append(_echo(run_lint(config, root)))
            except FileNotFoundError as err:
                raise BadInput(
                    f"{config.path.name}: lint: no such file or directory: {err.args[0]}"
                ) from None
        if "sweep" in wanted and config.sweeps:
            writable(sink.path, "the sweeps' records")
            stack.enter_context(sink)
            lab = stack.enter_context(open_check_lab(config))
            for outcome in run_sweeps(
                config,
                lab=lab,
                shard=shard,
                source=lambda entry: app_source(entry.app, entry.app_dir, root),
                on_point=functools.partial(_point_done, sink),
                allow_undecided=allow_undecided,
            ):
                outcomes.append(_echo(outcome))
                # Each point went to disk as it finished; once a sweep ends, its points in its order.
                sink.replace([p for o in outcomes for p in o.points])
            sink.close()
            click.echo(f"every crash point's record: {sink.path}")
        replay = config.replay_check
        if "replay-check" in wanted and replay is not None:
            if not replay.journals.exists():
                raise BadInput(
                    f"{config.path.name}: replay-check.journals: no such file or directory: {replay.journals}"
                )
            source = app_source(replay.app, replay.app_dir, root)
            outcomes.append(_echo(run_replay_check(config, root, source)))
    if not outcomes:
        raise BadInput(f"{config.path.name}: nothing to check ({', '.join(sorted(wanted))} not configured)")
    outputs.emit([f for o in outcomes for f in o.findings], [c for o in outcomes for c in o.cases])
    failed = [o for o in outcomes if not o.ok]
    verdict = (
        f"{len(failed)} of {len(outcomes)} checks fail" if failed else f"all {len(outcomes)} checks hold"
    )
    click.echo(f"verdict: {verdict}")
    sys.exit(1 if failed else 0)


def _config(path: Path | None) -> Config:
    found = path or find_config(Path.cwd())
    if found is None:
        raise BadInput(
            "no configuration: add a [tool.paidtwice] table to pyproject.toml (or a paidtwice.toml), "
            "or give --config FILE"
        )
    try:
        return load_config(found)
    except ConfigError as err:
        raise BadInput(str(err)) from None


def _echo(outcome: Outcome) -> Outcome:
    click.echo(outcome.line())
    return outcome


def _point_done(sink: RecordSink, point: PointResult) -> None:
    """A point as soon as it is measured: its record on disk, a line on stderr."""
    sink.add(point)
    echo_err(f"  {point.mode}/{point.script} #{point.order} {point.crash_point}: {point.status}")
