"""The paidtwice command line: a thin layer over the library (`paidtwice.lab`, `paidtwice.engine`).

One click group; its commands live by what they work on: the deck's rows on a lab (`_lab`: provision,
experiments, deck, run), one invocation on a running server (`_invocation`: journal, explain, recover), the
sweep (`_sweep`), the soak (`_soak`), the HTML page (`_report`), watching a server in production and a lab
that stays up to watch (`_watch`), lint (`_lint`), capture and replay-check (`_replay_check`), check
(`_check`). The options they share are in `_options`, the one bad-input error in `_bad_input`, how a
command ends (bad input, Ctrl-C, SIGTERM) in `_errors`. Only this package imports click: the library below
knows nothing of it (tests/test_layout.py).
"""

from __future__ import annotations

import gc
import sys

import click

from paidtwice.cli._check import check
from paidtwice.cli._errors import EXIT_TERMINATED, handle_sigterm, terminated
from paidtwice.cli._invocation import explain, journal, recover
from paidtwice.cli._lab import deck, experiments, provision, run
from paidtwice.cli._lint import lint_command
from paidtwice.cli._record import record
from paidtwice.cli._replay_check import capture_command, replay_check_command
from paidtwice.cli._report import report
from paidtwice.cli._soak import soak
from paidtwice.cli._sweep import sweep
from paidtwice.cli._watch import lab, watch

__all__ = ["cli", "main"]


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
    paidtwice watch --admin-url URL  in production: what is paying twice right now, priced
    paidtwice lab up                 a lab that stays up, to watch and explore
    paidtwice check                  everything [tool.paidtwice] in pyproject.toml names, for CI

    \b
    Where results go: deck, run and sweep write their records to paidtwice-results/ in the current
    directory, or to $PAIDTWICE_RESULTS or --results-dir DIR (for CI to collect), or to --json PATH.
    """


for _command in (
    provision,
    experiments,
    deck,
    run,
    journal,
    explain,
    soak,
    recover,
    sweep,
    record,
    report,
    lint_command,
    capture_command,
    replay_check_command,
    watch,
    lab,
    check,
):
    cli.add_command(_command)


def main() -> None:
    handle_sigterm()
    try:
        cli(prog_name="paidtwice")
    except SystemExit:
        # A SIGTERM outside a lab's run (click reports it as "Aborted!") still ends with SIGTERM's status.
        if terminated():
            sys.exit(EXIT_TERMINATED)
        raise
    finally:
        # The process is ending, and everything it started is stopped: the interpreter's garbage collection at
        # exit frees nothing the kernel would not, and took seconds of a loaded machine after the last line.
        gc.freeze()
