"""How a command ends: bad input in one line (exit 2), Ctrl-C (130) and SIGTERM (143) after the lab stopped
everything it started."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import click

from paidtwice._exceptions import LabCancelled, PaidtwiceError
from paidtwice.cli._bad_input import BadInput

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "errors",
    "handle_sigterm",
    "stopped_as_asked",
    "terminated",
]

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


def handle_sigterm() -> None:
    """From now on a SIGTERM unwinds the command as Ctrl-C does."""
    signal.signal(signal.SIGTERM, _on_sigterm)


_stop_is_the_end = threading.Event()


def terminated() -> bool:
    """Whether a SIGTERM arrived that cut a command short (not one that ended a command meant to run until
    stopped, `stopped_as_asked`)."""
    return _sigterm_received.is_set() and not _stop_is_the_end.is_set()


def stopped_as_asked() -> None:
    """The command runs until Ctrl-C or SIGTERM (`lab up`, `watch`): either one is its normal end, and it
    exits with its own status, not 130 or 143."""
    _stop_is_the_end.set()


@contextmanager
def errors() -> Iterator[None]:
    """The library's errors as one line and exit 2; an interrupted lab as exit 130 or 143."""
    try:
        yield
    except LabCancelled as err:
        click.echo(f"paidtwice: interrupted ({err})", err=True)
        sys.exit(EXIT_TERMINATED if terminated() else EXIT_INTERRUPTED)
    except Terminated:
        click.echo("paidtwice: terminated (SIGTERM); every process it started has been stopped", err=True)
        sys.exit(EXIT_TERMINATED)
    except KeyboardInterrupt:
        click.echo("paidtwice: interrupted; every process it started has been stopped", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except PaidtwiceError as err:
        raise BadInput(str(err)) from None
