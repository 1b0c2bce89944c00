"""The one way every command of the CLI (deck, lint, replay-check, ...) reports bad input."""

from __future__ import annotations

import click

__all__ = ["BadInput"]


class BadInput(click.ClickException):
    """A user mistake or an unusable environment: one line, exit 2."""

    exit_code = 2
