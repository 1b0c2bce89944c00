"""`paidtwice watch` (the invocations paying twice right now, read-only) and `paidtwice lab up` (a lab that
stays up to watch)."""

from __future__ import annotations

import sys
import time
from contextlib import ExitStack
from pathlib import Path

import click

from paidtwice._exceptions import PaidtwiceError
from paidtwice.cli._bad_input import BadInput
from paidtwice.cli._errors import errors, stopped_as_asked
from paidtwice.cli._options import (
    cluster_option,
    echo_err,
    json_on_stdout,
    json_option,
    price_model_option,
    writable,
)
from paidtwice.cli._target import script_option, target_options, variation_option
from paidtwice.engine import SqlClient
from paidtwice.recover import Judge
from paidtwice.report import format_watch
from paidtwice.results import RecordSink
from paidtwice.targets import TargetSpec
from paidtwice.watch import (
    JudgeFor,
    MetricsServer,
    Scanner,
    Watch,
    WatchSnapshot,
    check_profile,
    load_profile,
    parse_listen,
    snapshot_json,
)

__all__ = ["lab", "watch"]

EXIT_STUCK = 1


def _headers(values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    parsed = []
    for value in values:
        name, sep, content = value.partition(":")
        if not sep or not name.strip() or " " in name.strip():
            # The value is not echoed: it may hold a secret.
            raise BadInput("--header takes 'Name: value' (e.g. 'Authorization: Bearer ...')")
        parsed.append((name.strip(), content.strip()))
    return tuple(parsed)


@click.command("watch")
@click.option(
    "--admin-url",
    "admin_urls",
    multiple=True,
    default=("http://127.0.0.1:9070",),
    show_default=True,
    envvar="PAIDTWICE_ADMIN_URL",
    help="Admin API of the Restate server to read; repeat it for the nodes of a cluster (asked in turn).",
)
@click.option(
    "--header",
    "header_values",
    multiple=True,
    metavar="'NAME: VALUE'",
    help="A header sent with every request to the admin API (repeatable); never printed or written.",
)
@click.option(
    "--profile",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="What each attempt pays outside the journal: a sweep's or soak's --json of the same handler, "
    "or lint --format json.",
)
@price_model_option
@target_options(command=False, calls=False, app_dir=None)
@script_option()
@variation_option()
@click.option("--once", is_flag=True, help="Print one snapshot and exit.")
@click.option(
    "--interval",
    type=click.FloatRange(min=0.2),
    default=5.0,
    show_default=True,
    metavar="SECONDS",
    help="Seconds between two refreshes.",
)
@json_option("Write each snapshot as a JSON record (`paidtwice report` reads it).", each=True)
@click.option(
    "--metrics",
    "metrics_at",
    metavar="HOST:PORT",
    default=None,
    help="Serve Prometheus metrics at http://HOST:PORT/metrics (port 0: a free port, said on stderr).",
)
@click.option(
    "--on-pause",
    metavar="CMD",
    default=None,
    help="Run CMD (with sh) once for each invocation seen to become paused, its record as JSON on stdin.",
)
def watch(
    admin_urls: tuple[str, ...],
    header_values: tuple[str, ...],
    profile: Path | None,
    price_model: str,
    target: TargetSpec,
    script: str,
    variation: str,
    once: bool,
    interval: float,
    json_path: Path | None,
    metrics_at: str | None,
    on_pause: str | None,
) -> None:
    """List the invocations paying twice right now: retrying after a journal mismatch or another error, or
    paused. Read-only: it never changes an invocation (`paidtwice recover --apply` does).

    For each: service, handler, key, deployment, status, attempts, since when, the last error; for a journal
    mismatch the index and the two operations read against the journal (as `explain`); with --profile what
    each attempt pays outside the journal, in model calls, tokens and dollars, what it has paid again and its
    burn rate per hour; the ways out (as `recover`); with --app replay-check's verdict of the journal.

    Exit 0 when nothing is stuck, 1 when something is (at the last snapshot, also after Ctrl-C), 2 on bad
    input (an admin API that does not answer, a refused --header, a profile of another service).

    \b
    Examples:
        paidtwice watch --once --admin-url http://restate:9070
        paidtwice watch --admin-url https://restate.internal:9070 --header "Authorization: Bearer $TOKEN" \\
            --profile sweep.json --price-model gpt-4o --metrics 0.0.0.0:9464 \\
            --on-pause 'curl -s -X POST -H "Content-Type: application/json" -d @- "$SLACK_WEBHOOK"'
        paidtwice watch --once --json stuck.json && paidtwice report stuck.json -o stuck.html
        paidtwice watch --once --app agent:app --app-dir src --script script.toml --variation changed
    """
    headers = _headers(header_values)
    to_stdout = json_on_stdout()
    records = None if json_path is None or to_stdout else RecordSink(json_path)
    if records is not None:
        writable(records.path, "the snapshot")
    listen = None
    with errors():
        listen = parse_listen(metrics_at) if metrics_at else None
    with errors(), ExitStack() as stack:
        nodes = tuple(SqlClient(url.rstrip("/"), headers=headers) for url in admin_urls)
        loaded = load_profile(profile) if profile is not None else None
        scanner = Scanner(nodes=nodes, price_model=price_model, profile=loaded)
        first = scanner.snapshot()  # an admin API that does not answer is bad input, said before anything
        if loaded is not None:
            check_profile(scanner.sql, loaded)
        if target.app is not None:
            judges = _judges(stack, scanner, target=target, script=script, variation=variation)
            scanner.judge_with(judges, target.app)
            first = scanner.snapshot()
        metrics = None
        if listen is not None:
            metrics = MetricsServer(*listen)
            stack.callback(metrics.close)
            host = f"[{listen[0]}]" if ":" in listen[0] else listen[0]
            echo_err(f"metrics: http://{host}:{metrics.port}/metrics")
        runner = Watch(scanner, metrics=metrics, on_pause=on_pause, records=records, warn=echo_err)
        last = _loop(runner, first=first, once=once, interval=interval, to_stdout=to_stdout)
    sys.exit(EXIT_STUCK if last.stuck else 0)


def _loop(
    runner: Watch, *, first: WatchSnapshot, once: bool, interval: float, to_stdout: bool
) -> WatchSnapshot:
    """Show snapshots until Ctrl-C (or one, with --once); the last one taken is returned."""
    last = runner.step() if not once else _once(runner, first)
    _show(last, to_stdout=to_stdout, refresh=False)
    if once:
        return last
    try:
        while True:
            time.sleep(interval)
            try:
                last = runner.step()
            except PaidtwiceError as err:
                echo_err(f"paidtwice: {err} (retrying in {interval:g}s)")
                continue
            _show(last, to_stdout=to_stdout, refresh=True)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (`Terminated`)
        stopped_as_asked()
        echo_err("paidtwice: watch stopped")
    return last


def _once(runner: Watch, first: WatchSnapshot) -> WatchSnapshot:
    return runner.step() if runner.records is not None or runner.metrics is not None else first


def _show(snapshot: WatchSnapshot, *, to_stdout: bool, refresh: bool) -> None:
    if to_stdout:
        click.echo(snapshot_json(snapshot))
        return
    if refresh and sys.stdout.isatty():
        click.clear()
    elif refresh:
        click.echo("")
    click.echo(format_watch(snapshot))


def _judges(
    stack: ExitStack, scanner: Scanner, *, target: TargetSpec, script: str, variation: str
) -> JudgeFor:
    """replay-check's judge of each journal against the target's app, one Replayer for the watch's life."""
    from paidtwice.replay import Replayer, capture_journal, kept_journal_judge

    app = target.app
    assert app is not None
    replayer = stack.enter_context(Replayer(app, app_dir=target.app_dir, script=script, variation=variation))

    def judge_for(invocation_id: str) -> Judge:
        judge = kept_journal_judge(replayer, capture_journal(scanner.sql, invocation_id), app)
        verdicts: dict[int, tuple[str, int | None]] = {}

        def once_per_prefix(last_index: int) -> tuple[str, int | None]:
            # One replay per prefix: the resume's way out and the verdict judge the same whole journal.
            if last_index not in verdicts:
                verdicts[last_index] = judge(last_index)
            return verdicts[last_index]

        return once_per_prefix

    return judge_for


@click.group("lab")
def lab() -> None:
    """A lab that stays up: restate-server, the stub model and an app, to watch and to explore.

    \b
    Example:
        paidtwice lab up --app agent:app --app-dir src --script script.toml --variation changed
    """


@lab.command("up")
@target_options(command=False, calls=False, app_dir=None)
@script_option()
@variation_option()
@cluster_option
@click.option(
    "--info",
    "info_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the URLs here as JSON (admin_url, ingress_url, stub_url, ...).",
)
def lab_up(target: TargetSpec, script: str, variation: str, cluster: int, info_path: Path | None) -> None:
    """Start restate-server (or a cluster), the stub model and an app, print their URLs, and stay up until
    Ctrl-C or SIGTERM; then stop everything it started and exit 0.

    The app's services are registered under their own names; its model calls go to the stub, which answers
    from the script. Point `paidtwice watch`, Restate's UI or the `restate` CLI at the admin URL.

    \b
    Examples:
        paidtwice lab up
        paidtwice lab up --app agent:app --app-dir src --script script.toml --variation changed \\
            --info lab.json
        paidtwice lab up --cluster 3
    """
    from paidtwice.lab import LabUp

    writable(info_path, "the lab's URLs")
    app_dir = None if target.app_dir is None else Path(target.app_dir)
    with (
        errors(),
        LabUp(app=target.app, app_dir=app_dir, script=script, variation=variation, cluster=cluster) as up,
    ):
        info = up.info
        assert info is not None
        click.echo(f"admin:    {info.admin_url}")
        click.echo(f"ingress:  {info.ingress_url}")
        click.echo(f"UI:       {info.ui_url}")
        click.echo(f"stub:     {info.stub_url}")
        click.echo(f"services: {', '.join(info.services)} (deployment {info.deployment})")
        try:
            if info_path is not None:
                info.write(info_path)
            click.echo("up; Ctrl-C or SIGTERM stops it", err=True)
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (`Terminated`): the way a lab that stays up ends
            stopped_as_asked()
        finally:
            if info_path is not None:
                info_path.unlink(missing_ok=True)  # its URLs die with the lab
    click.echo("lab down: everything it started has stopped", err=True)
