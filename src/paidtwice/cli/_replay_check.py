"""`paidtwice capture` and `paidtwice replay-check`: journals off a server, checked against code offline.

A thin layer over the library `paidtwice.replay`, which knows nothing of click.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from paidtwice._exceptions import PaidtwiceError
from paidtwice._words import agent_name
from paidtwice.cli._bad_input import BadInput
from paidtwice.cli._ci import CiOutputs, app_source, ci_outputs
from paidtwice.cli._options import (
    admin_url_option,
    html_option,
    json_on_stdout,
    json_option,
    not_over,
    writable,
)
from paidtwice.cli._target import script_option, target_options, variation_option
from paidtwice.engine import SqlClient
from paidtwice.replay import STATUSES, Replayer, capture, journal_paths, load_journal, save_all
from paidtwice.report import (
    ReplayRow,
    TestCase,
    format_replay_table,
    replay_cases,
    replay_check_section,
    replay_details,
    replay_findings,
    replay_row,
    write_html,
)
from paidtwice.results import RecordSink, ReplayResult
from paidtwice.targets import Target, TargetSpec

__all__ = ["capture_command", "replay_check_command"]


@click.command("capture")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--service", required=True, metavar="NAME", help="The service whose invocations to capture.")
@click.option("--handler", metavar="NAME", help="Only this handler's invocations.")
@click.option(
    "--status",
    type=click.Choice(STATUSES),
    default="all",
    show_default=True,
    help="Which invocations: paused, running (also backing-off and suspended), completed, or all.",
)
@click.option("--last", type=click.IntRange(min=1), metavar="N", help="Only the N most recently modified.")
@click.option(
    "--unique-random-seeds",
    is_flag=True,
    help="The server runs with experimental-enable-unique-random-seeds: the journals' seeds are unknown.",
)
@admin_url_option
def capture_command(
    directory: Path,
    service: str,
    handler: str | None,
    status: str,
    last: int | None,
    unique_random_seeds: bool,
    admin_url: str,
) -> None:
    """Write one journal file per invocation of a service, read from a running Restate server.

    A journal file is self-contained JSON (format "paidtwice-journal", version 1): invocation id, service,
    handler, key, protocol version, status, random seed, and every entry with its raw bytes. Check the
    files against new code with `paidtwice replay-check`, without a server.

    \b
    Examples:
        paidtwice capture journals/ --service Agent --status completed --last 100
        paidtwice capture stuck/ --service Agent --status paused --admin-url http://127.0.0.1:9070
    """
    try:
        journals = capture(
            SqlClient(admin_url),
            service=service,
            handler=handler,
            status=status,
            last=last,
            seed_known=not unique_random_seeds,
            on_skip=lambda reason: click.echo(f"skipped: {reason}", err=True),
        )
        paths = save_all(directory, journals)
    except PaidtwiceError as err:
        raise BadInput(str(err)) from None
    except OSError as err:
        raise BadInput(f"cannot write to {directory}: {err.strerror}") from None
    noun = "journal" if len(paths) == 1 else "journals"
    click.echo(f"{len(paths)} {noun} of {service} written to {directory}")


@click.command("replay-check")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@target_options(calls=False, modes="one", app_dir=None)
@script_option()
@variation_option()
@json_option(
    "Write one JSON record per journal to FILE (`paidtwice report` reads it), complete once every journal "
    "is checked.",
    flag_form=True,
)
@html_option("a row per journal, divergences side by side")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=None,
    metavar="SECONDS",
    help="Seconds one journal's replay may take in all, however busy the machine (default: "
    "$PAIDTWICE_REPLAY_TIMEOUT, or 600). A replay whose code does nothing for 30 s is stuck, and given up "
    "sooner.",
)
@ci_outputs()
def replay_check_command(
    paths: tuple[Path, ...],
    target: TargetSpec,
    script: str,
    variation: str,
    json_path: Path | None,
    html_path: Path | None,
    timeout: float | None,
    outputs: CiOutputs,
) -> None:
    """Check, offline, whether the code replays captured journals (files or directories of them).

    Each journal is fed to the app's real restate-sdk endpoint in this process, with no server. Verdicts:
    replays; diverges at entry N (recorded vs attempted, the SDK's own message; N is the journal's entry
    index, as `paidtwice journal` numbers it, the SDK's command index beside it); continues (the journal is
    incomplete: the code replays it and would do next_command live). Model calls the code makes outside
    the journal go to paidtwice's stub model, answered by --script, and are listed; a step past the
    journal's end is never executed. Exit 0 when every journal replays or continues, 1 when one diverges,
    fails or cannot be decided, 2 on bad input.

    \b
    Examples:
        paidtwice replay-check --app agent:app journals/
        paidtwice replay-check --app agent:app --app-dir src --script changed stuck/inv_1a2b.json --json -
        paidtwice replay-check --app agent:app journals/ --json replay-check.json --html replay-check.html
        paidtwice replay-check --app agent:app journals/ --sarif replay.sarif --junit replay.xml
        PAIDTWICE_SERVICE=Agent_clean_1 paidtwice replay-check --mode journaled clean.json
    """
    code = _code(target)
    to_stdout = json_on_stdout()
    if json_path is not None and not to_stdout:
        _not_an_input(json_path, paths)
    files = _journal_files(paths)
    # Written at the end only: a file replaced per journal would copy the list once per journal.
    sink = None if json_path is None else RecordSink(json_path, publish=False)
    kept = _Kept(sink, table=not to_stdout, html=html_path is not None, junit=outputs.junit is not None)
    try:
        with sink or contextlib.nullcontext():
            _replay(files, kept, target=code, script=script, variation=variation, timeout=timeout)
    except OSError as err:
        raise BadInput(f"cannot write the records to {json_path}: {err.strerror or err}") from None
    if html_path is not None:
        _write_page(html_path, code, paths, kept.results)
        click.echo(f"HTML report: {html_path}", err=to_stdout)
    if not to_stdout:
        click.echo(format_replay_table(kept.rows, kept.details))
    if json_path is not None and not to_stdout:
        click.echo(f"Full records: {json_path}")
    if outputs.sarif or outputs.github:
        offline = code.offline()
        source = app_source(offline.app, Path(offline.app_dir or "."), Path.cwd())
    else:
        source = None
    outputs.emit(replay_findings(kept.failed, source), kept.cases)
    raise SystemExit(0 if not kept.failed else 1)


class _Kept:
    """What replay-check keeps of its results as they come, so memory does not grow with the journals'
    number: each record handed to the sink at once (--json); the table's rows and the details of what does
    not simply replay; the results that are not ok (the findings); a test case each only with --junit,
    every result only with --html."""

    def __init__(self, records: RecordSink | None, *, table: bool, html: bool, junit: bool) -> None:
        self.records = records
        self.table = table
        self.rows: list[ReplayRow] = []
        self.details: list[str] = []
        self.failed: list[ReplayResult] = []
        self.cases: list[TestCase] = []
        self.results: list[ReplayResult] = []
        self._html, self._junit = html, junit

    def add(self, result: ReplayResult) -> None:
        if self.records is not None:
            self.records.add(result)
        if self.table:
            self.rows.append(replay_row(result))
            self.details.extend(replay_details(result))
        if not result.ok:
            self.failed.append(result)
        if self._junit:
            self.cases.extend(replay_cases([result]))
        if self._html:
            self.results.append(result)


def _not_an_input(path: Path, paths: tuple[Path, ...]) -> None:
    """Refuse, before any replay, a --json file that is an input: `--json journals/` as the flag form was
    written before takes the journals for the file, and must not write the records over them."""
    if path.is_file():
        try:
            load_journal(path)
        except (PaidtwiceError, OSError):
            pass
        else:
            not_over(path, "it is a journal")
    inputs = [p.resolve() for p in paths]
    if path.resolve() in inputs or any(p in path.resolve().parents for p in inputs):
        not_over(path, "it is read for journals")
    writable(path, "the records")


def _journal_files(paths: tuple[Path, ...]) -> list[Path]:
    """The journal files the paths name; BadInput, before any replay, on a path that will not do."""
    if not paths:
        raise BadInput("give at least one journal file or directory")
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise BadInput(f"no such file or directory: {missing[0]}")
    files = journal_paths(paths)
    if not files:
        raise BadInput("no journal files (*.json) under " + ", ".join(str(p) for p in paths))
    return files


def _code(target: TargetSpec) -> Target:
    """The code the journals are replayed on, asked, before any journal is read, whether it can be
    replayed offline; BadInput in one line."""
    if not target.user_code and not target.modes:
        raise BadInput(
            "give the code to replay on: --app MODULE[:APP], --cmd CMD, or --mode (the deck's agent)"
        )
    try:
        code = target.code()
        code.offline()
    except PaidtwiceError as err:
        raise BadInput(str(err)) from None
    return code


def _replay(
    files: list[Path],
    kept: _Kept,
    *,
    target: Target,
    script: str,
    variation: str,
    timeout: float | None,
) -> None:
    try:
        with Replayer.of(target, script=script, variation=variation, timeout=timeout) as replayer:
            # Every journal is checked before the first replay (bad input exits 2 at once, nothing written),
            # then read again and replayed as a stream, on one loop, one app and one stub.
            for path in files:
                replayer.check(load_journal(path))
            for result in replayer.replay_stream(files):
                kept.add(result)
    except PaidtwiceError as err:
        raise BadInput(str(err)) from None


def _write_page(
    html_path: Path, target: Target, paths: tuple[Path, ...], results: list[ReplayResult]
) -> None:
    try:
        write_html(
            html_path,
            # What was checked, as the target describes itself (a soak's record names it the same way).
            f"paidtwice replay-check {target.label or agent_name(target.mode)}",
            [replay_check_section(results)],
            sources=[str(p) for p in paths],
        )
    except OSError as err:
        raise BadInput(f"cannot write {html_path}: {err.strerror}") from None
