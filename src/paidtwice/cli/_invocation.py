"""The commands that read one invocation on a running Restate server: `journal`, `explain` and `recover`."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import click

from paidtwice._exceptions import NotFound
from paidtwice.cli._bad_input import BadInput
from paidtwice.cli._errors import errors
from paidtwice.cli._options import admin_url_option
from paidtwice.cli._target import script_option, target_options
from paidtwice.engine import AdminClient, SqlClient
from paidtwice.recover import ApplyResult, Judge, apply_way, plan_recovery
from paidtwice.recover import explain as explain_invocation
from paidtwice.report import format_journal, format_mismatch, format_plan
from paidtwice.targets import TargetSpec

__all__ = ["explain", "journal", "recover"]


@click.command("journal")
@click.argument("invocation_id")
@click.option(
    "--save",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write it as a journal file (for `paidtwice replay-check`).",
)
@admin_url_option
def journal(invocation_id: str, save: Path | None, admin_url: str) -> None:
    """Print an invocation's journal by index, from a running Restate server.

    \b
    Examples:
        paidtwice journal inv_1a2b3c --admin-url http://127.0.0.1:9070
        paidtwice journal inv_1a2b3c --save journals/inv_1a2b3c.json
    """
    with errors():
        sql = SqlClient(admin_url)
        if sql.invocation(invocation_id) is None:
            raise NotFound(f"no invocation {invocation_id} on the server at {admin_url}")
        click.echo(format_journal(sql.journal(invocation_id)))
        if save is not None:
            _save_journal(sql, invocation_id, save)
            click.echo(f"journal file: {save}", err=True)


def _save_journal(sql: SqlClient, invocation_id: str, path: Path) -> None:
    from paidtwice.replay import capture_journal, save_journal

    try:
        save_journal(path, capture_journal(sql, invocation_id))
    except OSError as err:
        raise BadInput(f"cannot write {path}: {err.strerror}") from None


@click.command("explain")
@click.argument("invocation_id")
@admin_url_option
def explain(invocation_id: str, admin_url: str) -> None:
    """Read an invocation's journal mismatch (RT0016) against its journal.

    Prints the journal index, what the journal holds there, what the code attempted instead, the raw
    message, and whether the message's labels agree with the journal (some SDK versions swap them).

    \b
    Example:
        paidtwice explain inv_1a2b3c --admin-url http://127.0.0.1:9070
    """
    with errors():
        found = explain_invocation(SqlClient(admin_url), invocation_id)
    click.echo(f"{found.invocation_id}: {found.status}; failure {found.code} read from {found.source}")
    if found.mismatch is None:
        click.echo("not a journal mismatch; the message:")
        click.echo(found.message)
        return
    click.echo(format_mismatch(found.mismatch))


@click.command("recover")
@click.argument("invocation_id")
@click.option(
    "--deployment", metavar="DP_ID", help="Judge (and resume onto) this deployment, not the pinned one."
)
@click.option(
    "--apply",
    "way",
    metavar="WAY",
    help="Carry out one way out: pause, resume, restart, restart-from:N, kill.",
)
@click.option(
    "--timeout", default=120.0, show_default=True, help="Seconds to wait for the outcome of --apply."
)
@target_options(command=False, calls=False, app_dir=None)
@script_option()
@admin_url_option
def recover(
    invocation_id: str,
    deployment: str | None,
    way: str | None,
    timeout: float,
    target: TargetSpec,
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
    with errors(), ExitStack() as stack:
        sql = SqlClient(admin_url)
        judge = None
        if target.app is not None:
            judge = _offline_judge(
                stack, sql, invocation_id, app=target.app, app_dir=target.app_dir, script=script
            )
        plan = plan_recovery(sql, invocation_id, deployment=deployment, judge=judge)
        if way is None:
            click.echo(format_plan(plan))
            return
        result = apply_way(AdminClient(admin_url), sql, plan, way, timeout=timeout)
    _print_result(result)


def _offline_judge(
    stack: ExitStack, sql: SqlClient, invocation_id: str, *, app: str, app_dir: str | Path | None, script: str
) -> Judge:
    """Whether the app replays what a way out keeps, judged by replaying that offline (open on `stack`)."""
    from paidtwice.replay import Replayer, capture_journal, kept_journal_judge

    replayer = stack.enter_context(Replayer(app, app_dir=app_dir, script=script))
    return kept_journal_judge(replayer, capture_journal(sql, invocation_id), app)


def _print_result(result: ApplyResult) -> None:
    click.echo(f"applied {result.way}: {result.invocation_id} is {result.status}")
    for line in result.admin_log:
        click.echo(f"  {line}")
    ran = ", ".join(result.steps_run_again) or "none"
    click.echo(f"steps executed again: {ran}")
    if result.failure is not None:
        click.echo(f"failure: {result.failure.code}")
        if result.failure.mismatch is not None:
            click.echo(format_mismatch(result.failure.mismatch))
