"""`paidtwice soak`: many journaled invocations at once, the agent (the deck's, or your own app) killed while
they run."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from paidtwice._exceptions import UsageError
from paidtwice.cli._bad_input import BadInput
from paidtwice.cli._errors import EXIT_INTERRUPTED, EXIT_TERMINATED, errors, terminated
from paidtwice.cli._options import (
    check_outputs,
    cluster_option,
    echo_err,
    html_option,
    open_lab,
    price_model_option,
    records_option,
    server_version_option,
    write_report,
)
from paidtwice.cli._target import script_option, target_options
from paidtwice.lab import Lab
from paidtwice.report import format_soak, format_soak_progress, soak_section
from paidtwice.results import RecordSink, SoakRecord
from paidtwice.soak import DECK, SoakInterrupted, SoakOptions, SoakProgress, soak_target
from paidtwice.soak import soak as run_soak
from paidtwice.stub import AUTO, DEFAULT_SEED, Script, load_script_file
from paidtwice.targets import Target, TargetSpec

__all__ = ["soak"]


@click.command("soak")
@click.option("--invocations", default=200, show_default=True, type=click.IntRange(min=1))
@click.option("--kills", default=5, show_default=True, type=click.IntRange(min=0))
@click.option(
    "--kill-every",
    default=0.7,
    show_default=True,
    type=click.FloatRange(min=0.0),
    help="Seconds the agent runs between kills.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=1.0),
    help="Give up waiting after this many seconds [default: 60 + 0.1 per invocation + 60 per node kill].",
)
@click.option(
    "--node-kills",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="With --cluster: kill and restart this many nodes, one at a time, after the agent's kills; the "
    "invocations go in one wave per node kill (20 or more each), sent just before it.",
)
@target_options(command=False)
@script_option(default=None)
@records_option(
    "Where the soak's record is written, also when Ctrl-C stops it "
    "(default: RESULTS_DIR/soak-TIME-PID.json).",
    stem="soak",
)
@html_option()
@server_version_option
@price_model_option
@cluster_option
def soak(
    invocations: int,
    kills: int,
    kill_every: float,
    timeout: float | None,
    node_kills: int,
    target: TargetSpec,
    script: str | None,
    sink: RecordSink,
    html_path: Path | None,
    server_version: str,
    price_model: str,
    cluster: int,
) -> None:
    """Send many journaled invocations at once and kill the agent while they run.

    Prints sent, completed, paused, lost (failed or vanished) and unfinished (still running when the soak
    gave up, and why), model calls beyond the clean count (measured on a clean invocation first) against
    the bound taken at each kill, tool runs beyond the clean count, throughput, completion times and peak
    memory. Progress goes to stderr while it runs. Exit 1 unless every invocation completed and the extra
    calls stay within the bound. Ctrl-C stops it (exit 130) with what it measured until then printed and
    written.

    With --app, your own Restate app is soaked, its code unchanged: each model request it makes is tagged
    with its invocation by paidtwice's host, its model answered from each request (or by the --script
    file); its model calls are counted (tool runs are the deck agent's). Its one handler is found as the
    sweep finds them; an app serving several needs --service and --handler. An app whose calls never reach
    the stub is refused (exit 2).

    \b
    Example:
        paidtwice soak --invocations 10000 --kills 10
        paidtwice soak --invocations 200 --kills 5 --html soak.html --price-model gpt-4o
        paidtwice soak --cluster 3 --node-kills 3
        paidtwice soak --app agent:app --app-dir examples/travel_agent --service Travel --handler quote \\
            --input '"How much is 120 EUR in USD?"' --script examples/travel_agent/script.toml
    """
    on_terminal = sys.stderr.isatty()
    options = SoakOptions(
        invocations=invocations,
        kills=kills,
        kill_every=kill_every,
        timeout=timeout,
        node_kills=node_kills,
        progress_every=0.5 if on_terminal else 5.0,
    )
    try:
        options.check(cluster=cluster)
    except UsageError as err:
        raise BadInput(str(err)) from None
    soaked, answers = _soaked(target, script)
    check_outputs(sink.path, html_path, what="the soak's record")
    progress = _show_progress if on_terminal else _log_progress
    with errors():
        with open_lab(server_version=server_version, price_model=price_model, cluster=cluster) as lab:
            record, stopped = _soak_on(lab, options, soaked, answers, progress)
            # On disk before the lab stops its processes: a second Ctrl-C there loses nothing measured.
            sink.one(record)
    _report(record, sink.path, html_path, on_terminal=on_terminal, stopped=stopped)


def _soak_on(
    lab: Lab,
    options: SoakOptions,
    target: Target,
    script: Script | None,
    progress: Callable[[SoakProgress], None],
) -> tuple[SoakRecord, bool]:
    """The soak's record, and whether Ctrl-C or SIGTERM stopped it (the record says what ran until then)."""
    try:
        return run_soak(lab, options, target=target, script=script, progress=progress), False
    except SoakInterrupted as interrupted:
        return interrupted.record, True


def _report(
    record: SoakRecord, json_path: Path, html_path: Path | None, *, on_terminal: bool, stopped: bool
) -> None:
    """Print the record, write its page, and exit: 0 when it is ok, 1 when not, 130/143 when stopped."""
    if on_terminal:
        echo_err("")
    click.echo(format_soak(record))
    click.echo(f"Full record: {json_path}")
    write_report(html_path, "paidtwice soak", [soak_section(record)], [json_path])
    if stopped:
        how = "terminated (SIGTERM)" if terminated() else "interrupted"
        echo_err(f"paidtwice: {how}; every process it started has been stopped; above is what ran until then")
        sys.exit(EXIT_TERMINATED if terminated() else EXIT_INTERRUPTED)
    sys.exit(0 if record.ok else 1)


def _soaked(target: TargetSpec, script: str | None) -> tuple[Target, Script | None]:
    """Your app and its script, checked before anything starts (BadInput); the deck's agent and its own
    script (None) without --app. Without --script (or with `--script auto`) your app's model is answered
    from each request (None); without --service and --handler, its one handler is found in its discovery
    manifest, as the sweep finds them."""
    if target.app is None:
        if target.handlers or target.key or script or target.input is not None:
            raise BadInput("--service, --handler, --input, --key and --script go with --app")
        return DECK, None
    if len(target.handlers) > 1:
        raise BadInput("a soak drives one handler: name one with --service and --handler")
    try:
        answers = None if script is None or script == AUTO else load_script_file(Path(script))
        service, _, handler = (target.handlers or ("",))[0].partition("/")
        if handler:
            app_dir = Path(target.app_dir or ".")
            soaked = soak_target(target.app, service, handler, target.input, key=target.key, app_dir=app_dir)
            return soaked, answers
        found = target.build(seed=DEFAULT_SEED)
        if len(found) > 1:
            names = ", ".join(t.mode for t in found)
            raise UsageError(
                f"{target.app} serves {len(found)} handlers ({names}): name one with --service and --handler"
            )
        return found[0], answers
    except UsageError as err:
        raise BadInput(str(err)) from None


def _show_progress(progress: SoakProgress) -> None:
    """On a terminal: one line, rewritten in place."""
    click.echo("\r" + format_soak_progress(progress) + "\033[K", err=True, nl=False)


def _log_progress(progress: SoakProgress) -> None:
    """Elsewhere (a CI log): a line each time."""
    echo_err(format_soak_progress(progress))
