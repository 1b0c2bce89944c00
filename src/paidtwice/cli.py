"""The paidtwice command line: a thin layer over the library (`paidtwice.lab`, `paidtwice.engine`)."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from paidtwice._bad_input import BadInput
from paidtwice._exceptions import LabCancelled, NotFound, PaidtwiceError, UsageError
from paidtwice._pins import RESTATE_SERVER_VERSION, RESTATE_SERVER_VERSIONS
from paidtwice._words import count
from paidtwice.engine._admin import AdminClient
from paidtwice.engine._sql import SqlClient
from paidtwice.lab._bill import DEFAULT_PRICE_MODEL, check_price_model
from paidtwice.lab._experiments import (
    COMPARISONS,
    CURVES,
    DEFAULT_RESTART_DELAY,
    EXPERIMENTS,
    WALKS,
    Row,
    experiment_by_name,
    with_model_latency,
)
from paidtwice.lab._mismatch import explain as explain_invocation
from paidtwice.lab._records import (
    ComparisonRecord,
    CurveRecord,
    Record,
    RecoveryRecord,
    RunRecord,
    append_record,
    write_records,
)
from paidtwice.lab._recover import apply_way, plan_recovery
from paidtwice.lab._rows import run_rows
from paidtwice.lab._runner import Lab
from paidtwice.lab._soak import SoakProgress
from paidtwice.lint import lint_command
from paidtwice.replay._cli import capture_command, replay_check_command
from paidtwice.report._html import (
    Section,
    deck_sections,
    replay_check_section,
    soak_section,
    sweep_sections,
    write_html,
)
from paidtwice.report._load import load_results
from paidtwice.report._plot import curve_svg
from paidtwice.report._text import (
    format_comparison,
    format_crash_cost,
    format_curve,
    format_deck_table,
    format_journal,
    format_mismatch,
    format_plan,
    format_run,
    format_sweep,
    format_walk,
)
from paidtwice.stub._turns import VARIATIONS

__all__ = ["cli", "main"]

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_RESULTS = Path("paidtwice-results")
RESULTS_ENV = "PAIDTWICE_RESULTS"
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143  # 128 + SIGTERM, as a shell reports a program that SIGTERM ended


class Terminated(KeyboardInterrupt):
    """SIGTERM, which `kill`, container runtimes and CI runners send: handled as Ctrl-C is."""


_sigterm_received = threading.Event()


def _on_sigterm(signum: int, frame: object) -> None:
    # One is enough: a second SIGTERM must not cut short the clean-up the first one started.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _sigterm_received.set()
    raise Terminated()


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except LabCancelled as err:
        click.echo(f"paidtwice: interrupted ({err})", err=True)
        sys.exit(_interrupted_status())
    except Terminated:
        click.echo("paidtwice: terminated (SIGTERM); every process it started has been stopped", err=True)
        sys.exit(EXIT_TERMINATED)
    except KeyboardInterrupt:
        click.echo("paidtwice: interrupted; every process it started has been stopped", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except (NotFound, UsageError) as err:
        raise BadInput(str(err)) from None
    except PaidtwiceError as err:
        raise BadInput(str(err)) from None


def _interrupted_status() -> int:
    """130 after Ctrl-C, 143 after SIGTERM."""
    return EXIT_TERMINATED if _sigterm_received.is_set() else EXIT_INTERRUPTED


def _html_option(function: F) -> F:
    return click.option(
        "--html",
        "html_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Also write one self-contained HTML report here (timelines, journals, plots; opens from disk).",
    )(function)


def _write_report(path: Path | None, title: str, sections: list[Section], sources: list[Path]) -> None:
    if path is None:
        return
    write_html(path, title, sections, sources=[str(s) for s in sources])
    click.echo(f"HTML report: {path}")


def _server_version(function: F) -> F:
    return click.option(
        "--server-version",
        type=click.Choice(RESTATE_SERVER_VERSIONS),
        default=RESTATE_SERVER_VERSION,
        show_default=True,
        help="restate-server version from npm (1.7.10 is the one the deck was recorded on).",
    )(function)


def _check_price_model(ctx: click.Context, param: click.Parameter, value: str) -> str:
    try:
        return check_price_model(value)
    except UsageError as err:
        raise BadInput(str(err)) from None


def _price_model(function: F) -> F:
    return click.option(
        "--price-model",
        default=DEFAULT_PRICE_MODEL,
        show_default=True,
        metavar="NAME",
        callback=_check_price_model,
        help="The model whose prices (genai-prices) the dollars are at.",
    )(function)


def _model_latency(function: F) -> F:
    return click.option(
        "--model-latency",
        type=click.FloatRange(min=0),
        default=None,
        metavar="SECONDS",
        help="Seconds the stub's model takes to answer each call (default: the row's own, 0 for most).",
    )(function)


def _results_dir(function: F) -> F:
    return click.option(
        "--results-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=DEFAULT_RESULTS,
        show_default=True,
        envvar=RESULTS_ENV,
        help=f"Where records go when --json is not given (also ${RESULTS_ENV}).",
    )(function)


def _cluster(function: F) -> F:
    return click.option(
        "--cluster",
        "cluster",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        metavar="N",
        help="Run on a cluster of N restate-server nodes on loopback (3 or more; 1 is a single server).",
    )(function)


def _admin_url(function: F) -> F:
    return click.option(
        "--admin-url",
        default="http://127.0.0.1:9070",
        show_default=True,
        envvar="PAIDTWICE_ADMIN_URL",
        help="Admin API of the Restate server to read.",
    )(function)


def _save_journals(function: F) -> F:
    return click.option(
        "--save-journals",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        metavar="DIR",
        help="Write each invocation's journal file here, for `paidtwice replay-check`.",
    )(function)


def _record_journals(sql: SqlClient, directory: Path, record: Record) -> None:
    """The journals of a finished record's invocations, captured while its server still runs."""
    from paidtwice.replay._journal import save_invocation

    runs = record.runs if isinstance(record, CurveRecord) else ()
    if isinstance(record, RunRecord):
        save_invocation(sql, directory, record.name, record.invocation_id)
    for i, run in enumerate(runs, start=1):
        save_invocation(sql, directory, f"{record.name}-{i}", run.invocation_id)
    if isinstance(record, RecoveryRecord):
        save_invocation(sql, directory, record.name, record.invocation_id)
        for i, step in enumerate(record.steps, start=1):
            if step.invocation_id and step.invocation_id != record.invocation_id:
                save_invocation(sql, directory, f"{record.name}-step{i}", step.invocation_id)


@click.group()
@click.version_option(package_name="paidtwice")
def cli() -> None:
    """Count, explain and stop the model calls a Restate replay pays for twice.

    \b
    paidtwice deck                   run every experiment of the deck, deck figures beside measured
    paidtwice run naive-flip         one experiment, with its journal and model-call log
    paidtwice journal inv_1a2b...    any invocation's journal, by index
    paidtwice explain inv_1a2b...    read a journal mismatch (RT0016) against the journal
    paidtwice lint src/              find calls a replay will pay for twice
    paidtwice replay-check --app agent:app journals/
                                     will new code replay captured journals? offline, no server

    \b
    Where results go: deck, run and sweep write their records to paidtwice-results/ in the current
    directory, or to $PAIDTWICE_RESULTS or --results-dir DIR (for CI to collect), or to --json PATH.
    """


@cli.command()
@_server_version
def provision(server_version: str) -> None:
    """Install restate-server, restatectl and Node.js 22 from npm into paidtwice's cache (done on first use
    anyway).

    \b
    Example:
        paidtwice provision --server-version 1.7.10
    """
    from paidtwice.engine._provision import ensure_node_binary, ensure_restatectl, ensure_server_binary

    with _errors():
        binary = ensure_server_binary(server_version, echo=lambda m: click.echo(m, err=True))
        restatectl = ensure_restatectl(echo=lambda m: click.echo(m, err=True))
        # Node 22 for TypeScript agents (sweep --cmd puts it first on the command's PATH).
        node = ensure_node_binary(echo=lambda m: click.echo(m, err=True))
    click.echo(str(binary))
    click.echo(str(restatectl), err=True)
    click.echo(str(node), err=True)


@cli.command()
def experiments() -> None:
    """List the deck's experiments: agent mode, stub script, fault, and what the deck reports.

    \b
    Example:
        paidtwice experiments
    """
    for row in EXPERIMENTS:
        click.echo(f"{row.name:26} {row.mode:9} {row.script:9} {row.fault.describe()}")
        click.echo(f"{'':26} deck: {row.deck_says}")
    for curve in CURVES:
        delays = ", ".join(f"{d:g}" for d in curve.delays)
        click.echo(f"{curve.name:26} {curve.base.mode:9} {curve.base.script:9} delays {delays} s")
        click.echo(f"{'':26} deck: {curve.deck_says}")
    for walk in WALKS:
        click.echo(f"{walk.name:26} recover {walk.base.name}'s paused invocation; fix: {walk.fix_mode}")
        click.echo(f"{'':26} deck: {walk.deck_says}")
    for pair in COMPARISONS:
        click.echo(f"{pair.name:26} {pair.first.name} vs {pair.second.name}, {pair.first.fault.describe()}")
        click.echo(f"{'':26} beyond the deck: {pair.deck_says}")


def _rows(names: tuple[str, ...]) -> list[Row]:
    if not names:
        return [*EXPERIMENTS, *CURVES, *WALKS, *COMPARISONS]
    with _errors():
        return [experiment_by_name(name) for name in names]


def _run_rows(
    lab: Lab, rows: list[Row], *, json_path: Path, serial: bool, journals: Path | None = None
) -> list[Record]:
    records: list[Record] = []
    write_records(json_path, records)

    def save(record: Record) -> None:
        append_record(json_path, records, record)
        if journals is not None:
            _record_journals(lab.sql, journals, record)
        verdict = "matches" if record.matches else "DIFFERS from the deck"
        click.echo(f"  finished {record.name}: {verdict}", err=True)
        if isinstance(record, CurveRecord):
            svg = curve_svg(record, json_path.with_name(f"{json_path.stem}-{record.name}.svg"))
            click.echo(f"  plot of {record.name}: {svg}", err=True)

    ordered = run_rows(lab, rows, concurrent=not serial, on_record=save)
    write_records(json_path, ordered)
    return ordered


def _default_json(results_dir: Path, stem: str) -> Path:
    # Two labs started at once in one directory must not write the same file.
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return results_dir / f"{stem}-{stamp}-{os.getpid()}.json"


@cli.command()
@click.option("--only", "only", multiple=True, metavar="NAME", help="Run only these experiments.")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where the full records are written, after each finished run "
    "(default: RESULTS_DIR/deck-TIME-PID.json).",
)
@_results_dir
@click.option("--serial", is_flag=True, help="One run at a time instead of all at once.")
@_html_option
@_save_journals
@_server_version
@_cluster
@_price_model
def deck(
    only: tuple[str, ...],
    json_path: Path | None,
    results_dir: Path,
    serial: bool,
    html_path: Path | None,
    save_journals: Path | None,
    server_version: str,
    price_model: str,
    cluster: int,
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
    json_path = json_path or _default_json(results_dir, "deck")
    with _errors():
        where = f"a {cluster}-node cluster of " if cluster > 1 else ""
        click.echo(
            f"paidtwice: {count(len(rows), 'experiment')} on {where}restate-server {server_version}", err=True
        )
        with Lab(
            server_version=server_version,
            echo=lambda m: click.echo(m, err=True),
            price_model=price_model,
            cluster=cluster,
        ) as lab:
            records = _run_rows(lab, rows, json_path=json_path, serial=serial, journals=save_journals)
    click.echo(format_deck_table(records))
    for record in records:
        if isinstance(record, CurveRecord):
            click.echo(f"\n{record.name}:")
            click.echo(format_curve(record))
        elif isinstance(record, RecoveryRecord):
            click.echo(f"\n{record.name}:")
            click.echo(format_walk(record))
        elif isinstance(record, ComparisonRecord):
            click.echo(f"\n{record.name}:")
            click.echo(format_comparison(record))
    click.echo(f"\nFull records: {json_path}")
    _write_report(html_path, "paidtwice deck", deck_sections(records), [json_path])
    sys.exit(0 if all(r.matches for r in records) else 1)


@cli.command()
@click.argument("name")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where the record is written (default: RESULTS_DIR/NAME-TIME-PID.json).",
)
@_results_dir
@_html_option
@_save_journals
@_server_version
@_cluster
@_price_model
@_model_latency
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
    json_path = json_path or _default_json(results_dir, name)
    with _errors():
        with Lab(
            server_version=server_version,
            echo=lambda m: click.echo(m, err=True),
            price_model=price_model,
            cluster=cluster,
        ) as lab:
            records = _run_rows(lab, [row], json_path=json_path, serial=True, journals=save_journals)
    for record in records:
        if isinstance(record, RunRecord):
            click.echo(format_run(record))
        elif isinstance(record, CurveRecord):
            click.echo(format_curve(record))
        elif isinstance(record, ComparisonRecord):
            click.echo(format_comparison(record))
        else:
            click.echo(format_walk(record))
    click.echo(f"\nFull record: {json_path}")
    _write_report(html_path, f"paidtwice run {name}", deck_sections(records), [json_path])
    sys.exit(0 if all(r.matches for r in records) else 1)


@cli.command()
@click.argument("invocation_id")
@click.option(
    "--save",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write it as a journal file (for `paidtwice replay-check`).",
)
@_admin_url
def journal(invocation_id: str, save: Path | None, admin_url: str) -> None:
    """Print an invocation's journal by index, from a running Restate server.

    \b
    Examples:
        paidtwice journal inv_1a2b3c --admin-url http://127.0.0.1:9070
        paidtwice journal inv_1a2b3c --save journals/inv_1a2b3c.json
    """
    with _errors():
        sql = SqlClient(admin_url)
        if sql.invocation(invocation_id) is None:
            raise NotFound(f"no invocation {invocation_id} on the server at {admin_url}")
        click.echo(format_journal(sql.journal(invocation_id)))
        if save is not None:
            from paidtwice.replay._journal import capture_journal, save_journal

            try:
                save_journal(save, capture_journal(sql, invocation_id))
            except OSError as err:
                raise BadInput(f"cannot write {save}: {err.strerror}") from None
            click.echo(f"journal file: {save}", err=True)


@cli.command()
@click.argument("invocation_id")
@_admin_url
def explain(invocation_id: str, admin_url: str) -> None:
    """Read an invocation's journal mismatch (RT0016) against its journal.

    Prints the journal index, what the journal holds there, what the code attempted instead, the raw
    message, and whether the message's labels agree with the journal (some SDK versions swap them).

    \b
    Example:
        paidtwice explain inv_1a2b3c --admin-url http://127.0.0.1:9070
    """
    with _errors():
        found = explain_invocation(SqlClient(admin_url), invocation_id)
    click.echo(f"{found.invocation_id}: {found.status}; failure {found.code} read from {found.source}")
    if found.mismatch is None:
        click.echo("not a journal mismatch; the message:")
        click.echo(found.message)
        return
    click.echo(format_mismatch(found.mismatch))


@cli.command()
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
    help="Give up waiting after this many seconds [default: 60 + 0.1 per invocation].",
)
@click.option(
    "--node-kills",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="With --cluster: kill and restart this many nodes, one at a time, after the agent's kills.",
)
@_html_option
@_server_version
@_price_model
@_cluster
def soak(
    invocations: int,
    kills: int,
    kill_every: float,
    timeout: float | None,
    node_kills: int,
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
    calls stay within the bound.

    \b
    Example:
        paidtwice soak --invocations 10000 --kills 10
        paidtwice soak --invocations 200 --kills 5 --html soak.html --price-model gpt-4o
        paidtwice soak --cluster 3 --node-kills 3
    """
    from paidtwice.lab._soak import soak as run_soak
    from paidtwice.report._soak import format_soak, format_soak_progress

    on_terminal = sys.stderr.isatty()

    def show(progress: SoakProgress) -> None:
        line = format_soak_progress(progress)
        if on_terminal:
            click.echo("\r" + line + "\033[K", err=True, nl=False)
        else:
            click.echo(line, err=True)

    if node_kills and cluster == 1:
        raise BadInput("--node-kills needs a cluster: add --cluster 3")
    with _errors():
        with Lab(
            server_version=server_version,
            echo=lambda m: click.echo(m, err=True),
            price_model=price_model,
            cluster=cluster,
        ) as lab:
            record = run_soak(
                lab,
                invocations=invocations,
                kills=kills,
                kill_every=kill_every,
                timeout=timeout,
                progress=show,
                progress_every=0.5 if on_terminal else 5.0,
                node_kills=node_kills,
            )
    if on_terminal:
        click.echo("", err=True)
    click.echo(format_soak(record))
    _write_report(html_path, "paidtwice soak", [soak_section(record)], [])
    sys.exit(0 if record.ok else 1)


@cli.command()
@click.argument("invocation_id")
@click.option(
    "--deployment", metavar="DP_ID", help="Judge (and resume onto) this deployment, not the pinned one."
)
@click.option(
    "--apply", "way", metavar="WAY", help="Carry out one way out: resume, restart, restart-from:N, kill."
)
@click.option(
    "--timeout", default=120.0, show_default=True, help="Seconds to wait for the outcome of --apply."
)
@click.option(
    "--app",
    metavar="MODULE:APP",
    help="The target code: judge whether it replays what each way keeps by replaying that offline.",
)
@click.option(
    "--app-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help="Where MODULE is."
)
@click.option(
    "--script",
    default="steady",
    show_default=True,
    metavar="NAME|FILE",
    help="With --app: the stub's answers.",
)
@_admin_url
def recover(
    invocation_id: str,
    deployment: str | None,
    way: str | None,
    timeout: float,
    app: str | None,
    app_dir: Path | None,
    script: str,
    admin_url: str,
) -> None:
    """List the ways out of a stuck (paused or backing-off) invocation, priced, or apply one.

    For each way out: the journal entries it keeps, the recorded steps that will run (and be paid for)
    again, and whether the target code can replay what is kept, judged from the last failure and from an
    invocation that completed on the target deployment.

    \b
    Examples:
        paidtwice recover inv_1a2b3c
        paidtwice recover inv_1a2b3c --deployment dp_9z8y --apply resume
        paidtwice recover inv_1a2b3c --apply restart-from:6
        paidtwice recover inv_1a2b3c --deployment dp_9z8y --app agent:app --app-dir src
    """
    with _errors(), ExitStack() as stack:
        sql = SqlClient(admin_url)
        judge = None
        if app is not None:
            from paidtwice.replay._journal import capture_journal
            from paidtwice.replay._replayer import Replayer, kept_journal_judge

            replayer = stack.enter_context(Replayer(app, app_dir=app_dir, script=script))
            judge = kept_journal_judge(replayer, capture_journal(sql, invocation_id), app)
        plan = plan_recovery(sql, invocation_id, deployment=deployment, judge=judge)
        if way is None:
            click.echo(format_plan(plan))
            return
        result = apply_way(AdminClient(admin_url), sql, plan, way, timeout=timeout)
    click.echo(f"applied {result.way}: {result.invocation_id} is {result.status}")
    for line in result.admin_log:
        click.echo(f"  {line}")
    ran = ", ".join(result.steps_run_again) or "none"
    click.echo(f"steps executed again: {ran}")
    if result.failure is not None:
        click.echo(f"failure: {result.failure.code}")
        if result.failure.mismatch is not None:
            click.echo(format_mismatch(result.failure.mismatch))


@cli.command()
@click.option(
    "--mode",
    "modes",
    multiple=True,
    type=click.Choice(["naive", "journaled"]),
    help="The deck agent's modes to sweep (default: both).",
)
@click.option(
    "--script",
    "scripts",
    multiple=True,
    metavar="NAME|FILE",
    help="The deck's agent: stub scripts steady, drifting, changed (default: all three). "
    "With --app: the script file giving the model's answer to each call (a `[[turn]]` matched by `when`, or "
    "by its position in the conversation).",
)
@click.option(
    "--variation",
    "variations",
    multiple=True,
    type=click.Choice(VARIATIONS),
    help="With --app: the script file's variations to sweep (default: all three).",
)
@click.option("--app", metavar="MODULE:APP", help="Sweep your own Restate app instead of the deck's agent.")
@click.option(
    "--cmd",
    "command",
    metavar="CMD",
    help="Sweep a deployment in any language started by this shell command (e.g. 'node agent.ts'), told its "
    "port in $PORT (see --port-env), the stub in OPENAI_BASE_URL/ANTHROPIC_BASE_URL, Node 22 first on PATH.",
)
@click.option(
    "--port-env", default="PORT", show_default=True, metavar="VAR", help="With --cmd: the port's variable."
)
@click.option(
    "--cwd",
    "cmd_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="With --cmd: the directory the command runs in (default: the current one).",
)
@click.option("--service", metavar="NAME", help="With --app: the service to call.")
@click.option("--handler", metavar="NAME", help="With --app: the handler to call.")
@click.option(
    "--input", "input_json", metavar="JSON", default="null", help="With --app: the handler's input."
)
@click.option(
    "--app-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="With --app: the directory MODULE is imported from.",
)
@click.option(
    "--restart-delay",
    type=click.FloatRange(min=0),
    default=DEFAULT_RESTART_DELAY,
    show_default=True,
    help="Seconds the agent stays down after each kill.",
)
@click.option(
    "--parallel", type=click.IntRange(min=1), default=16, show_default=True, help="Crash points run at once."
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where every point's record is written, after each finished point "
    "(default: RESULTS_DIR/sweep-TIME-PID.json).",
)
@_results_dir
@click.option("--check", is_flag=True, help="Exit 1 when any crash point pays twice (for CI).")
@_html_option
@click.option(
    "--save-journals",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Write each point's final journal file here and, beside it (NAME.prefix.json), the journal as it "
    "stood when the kill landed.",
)
@_price_model
@_model_latency
@click.option(
    "--crash-rate",
    type=click.FloatRange(min=0),
    default=None,
    metavar="R",
    help="Crashes per 1,000 invocations: also print the expected extra cost per 1,000 invocations.",
)
@_cluster
def sweep(
    modes: tuple[str, ...],
    scripts: tuple[str, ...],
    variations: tuple[str, ...],
    app: str | None,
    command: str | None,
    port_env: str,
    cmd_dir: Path | None,
    service: str | None,
    handler: str | None,
    input_json: str,
    app_dir: Path,
    restart_delay: float,
    parallel: int,
    json_path: Path | None,
    results_dir: Path,
    check: bool,
    html_path: Path | None,
    save_journals: Path | None,
    price_model: str,
    model_latency: float | None,
    crash_rate: float | None,
    cluster: int,
) -> None:
    """Kill the agent at every moment of a clean run and measure what survives and what is paid again.

    From a clean run's timeline come the crash points: after each journal entry, in flight inside each
    model call and each step, in each durable pause. Each is killed, restarted and measured against the
    clean run, all at once on one server. Prints a matrix per mode and script, then the summary. Exit 1
    when a kill did not land where its point says; with --check also when a point paid twice for work that
    had completed (a model call outside the journal, a step run again); 2 on bad input.

    Then, per script and mode side by side, the expected extra dollars of one crash at a uniformly random
    moment of the clean run (each point's extra dollars weighted by the share of the run's time it covers),
    and with --crash-rate R (crashes per 1,000 invocations) that cost per 1,000 invocations.

    \b
    Examples:
        paidtwice sweep
        paidtwice sweep --model-latency 1 --crash-rate 5 --price-model gpt-4o
        paidtwice sweep --mode journaled --script changed --json sweep.json --html sweep.html
        paidtwice sweep --app agent:app --service Travel --handler quote \\
            --input '"How much is 120 EUR in USD?"' --script examples/travel_agent/script.toml \\
            --app-dir examples/travel_agent --check
        paidtwice sweep --cmd 'node agent.ts' --cwd examples/ts_agent --service Agent --handler run \\
            --input '"What should I wear in Paris today?"' --script examples/ts_agent/script.toml
    """
    from paidtwice.lab._sweep import sweep as run_sweep
    from paidtwice.lab._sweep import write_sweep

    if app is not None and command is not None:
        raise BadInput("give --app or --cmd, not both")
    if command is None and cmd_dir is not None:
        raise BadInput("--cwd goes with --cmd")
    own = "--app" if command is None else "--cmd"
    if app is None and command is None and (service or handler or variations):
        raise BadInput("--service, --handler and --variation go with --app or --cmd")
    if app is not None or command is not None:
        if len(scripts) != 1:
            raise BadInput(f"with {own}, give one script file: --script FILE")
        if not service or not handler:
            raise BadInput(f"with {own}, name the service and the handler: --service NAME --handler NAME")
        try:
            payload = json.loads(input_json)
        except ValueError as err:
            raise BadInput(f"--input is not JSON: {err}") from None
    json_path = json_path or _default_json(results_dir, "sweep")
    done: list[Any] = []
    lab: Lab | None = None

    def save(result: Any) -> None:
        done.append(result)
        write_sweep(json_path, done)
        if save_journals is not None and lab is not None:
            from paidtwice.replay._journal import save_with_prefix

            # A command's mode names its command: spaces and slashes stay out of the file's name.
            mode = re.sub(r"[^A-Za-z0-9._-]+", "_", result.mode).strip("_")
            name = f"{mode}-{result.script}-{result.order:02d}"
            save_with_prefix(lab.sql, save_journals, name, result.invocation_id, result.journal_at_kill)
        click.echo(
            f"  {result.mode}/{result.script} #{result.order} {result.crash_point}: {result.status}", err=True
        )

    with _errors(), ExitStack() as stack:
        if save_journals is not None:
            # The sweep's lab is ours, so its server still runs when each point's journal is captured.
            lab = stack.enter_context(
                Lab(echo=lambda m: click.echo(m, err=True), price_model=price_model, cluster=cluster)
            )
        if command is not None:
            matrices = run_sweep(
                command=command,
                port_env=port_env,
                service=service,
                handler=handler,
                input=payload,
                script=Path(scripts[0]),
                scripts=variations or VARIATIONS,
                app_dir=cmd_dir or Path("."),
                restart_delay=restart_delay,
                parallel=parallel,
                lab=lab,
                on_point=save,
                model_latency=model_latency or 0.0,
                price_model=price_model,
                cluster=cluster,
            )
        elif app is None:
            matrices = run_sweep(
                modes=modes or ("naive", "journaled"),
                scripts=scripts or VARIATIONS,
                restart_delay=restart_delay,
                parallel=parallel,
                lab=lab,
                on_point=save,
                model_latency=model_latency or 0.0,
                price_model=price_model,
                cluster=cluster,
            )
        else:
            matrices = run_sweep(
                app=app,
                service=service,
                handler=handler,
                input=payload,
                script=Path(scripts[0]),
                scripts=variations or VARIATIONS,
                app_dir=app_dir,
                restart_delay=restart_delay,
                parallel=parallel,
                lab=lab,
                on_point=save,
                model_latency=model_latency or 0.0,
                price_model=price_model,
                cluster=cluster,
            )
    ordered = [p for m in matrices for p in m.points]
    if check and not ordered:
        raise BadInput("--check found no crash point to check")
    write_sweep(json_path, ordered)
    for matrix in matrices:
        click.echo(format_sweep(matrix) + "\n")
    click.echo(format_crash_cost(matrices, crash_rate) + "\n")
    points = len(ordered)
    wall = matrices[0].wall_time if matrices else 0.0
    click.echo(f"{count(points, 'crash point')} in {wall:.1f}s; every point's record: {json_path}")
    _write_report(html_path, "paidtwice sweep", sweep_sections(ordered), [json_path])
    missed = [p for p in ordered if not p.confirmed]
    twice = [p for p in ordered if p.pays_twice]
    if missed:
        click.echo(f"{count(len(missed), 'kill')} did not land where its point says; see 'landed'", err=True)
    if check and twice:
        click.echo(f"{count(len(twice), 'crash point')} paid twice for completed work", err=True)
    sys.exit(1 if missed or (check and twice) else 0)


@cli.command()
@click.argument(
    "results",
    nargs=-1,
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="RESULTS.json...",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The HTML file to write (default: the first results file with .html).",
)
def report(results: tuple[Path, ...], output: Path | None) -> None:
    """Make one self-contained HTML report from result files (--json of deck, run, sweep or replay-check).

    The page has the deck-against-measured table with verdicts; per run a timeline (attempts, the kill and
    the down time, model calls delivered or cut off, journal entries), the journal by index, the mismatch
    and the admin log; the restart-delay curve measured against predicted; for a sweep, a heatmap of crash
    points against mode and script, each cell linking to that point's timeline; for a replay-check, a row
    per journal with its verdict, a divergence as the recorded and attempted commands side by side. Inline
    CSS and SVG, no request: it opens from disk and prints to PDF. Exit 2 on a file that is not a paidtwice
    result or is of an older format.

    \b
    Examples:
        paidtwice report paidtwice-results/deck-20261204-120000-4242.json -o deck.html
        paidtwice report deck.json sweep.json -o ci-report.html
        paidtwice report replay-check.json -o replay-check.html
    """
    with _errors():
        loaded = load_results(results)
    sections = deck_sections(loaded.records) if loaded.records else []
    if loaded.points:
        sections += sweep_sections(loaded.points)
    if loaded.replays:
        sections.append(replay_check_section(loaded.replays))
    present = (("deck", loaded.records), ("sweep", loaded.points), ("replay-check", loaded.replays))
    kinds = [kind for kind, found in present if found]
    output = output or results[0].with_suffix(".html")
    _write_report(output, f"paidtwice report: {' and '.join(kinds)}", sections, list(results))


cli.add_command(lint_command)
cli.add_command(capture_command)
cli.add_command(replay_check_command)


def main() -> None:
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        cli(prog_name="paidtwice")
    except SystemExit:
        # A SIGTERM outside a lab's run (click reports it as "Aborted!") still ends with SIGTERM's status.
        if _sigterm_received.is_set():
            sys.exit(EXIT_TERMINATED)
        raise
