"""Click options that commands of more than one group share (the CLI's own: `paidtwice.cli._options`)."""

from __future__ import annotations

import click

__all__ = ["admin_url_option"]

admin_url_option = click.option(
    "--admin-url",
    default="http://127.0.0.1:9070",
    show_default=True,
    envvar="PAIDTWICE_ADMIN_URL",
    help="Admin API of the Restate server to read.",
)
"""--admin-url: the Restate server a command reads (also $PAIDTWICE_ADMIN_URL)."""
