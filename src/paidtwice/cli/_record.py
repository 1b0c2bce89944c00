"""`paidtwice record`: a clean run answered by a real model, its answers written as a script file."""

from __future__ import annotations

from pathlib import Path

import click

from paidtwice.cli._bad_input import BadInput
from paidtwice.cli._errors import errors
from paidtwice.cli._options import echo_err, writable
from paidtwice.cli._target import target_options
from paidtwice.sweep import record_answers
from paidtwice.targets import TargetSpec

__all__ = ["record"]


@click.command("record")
@target_options()
@click.option(
    "--upstream",
    metavar="URL",
    required=True,
    help="The real model's base URL: OpenAI-compatible (https://api.openai.com/v1, chat completions and "
    "Responses) or Anthropic-compatible (https://api.anthropic.com).",
)
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    metavar="FILE",
    help="Where the answers are written: a script file (TOML for .toml, else JSON) for --script.",
)
def record(target: TargetSpec, upstream: str, out_path: Path) -> None:
    """Run a handler once with its model calls answered by a real model; write the answers as a script file.

    The key is read from OPENAI_API_KEY (chat completions, Responses) or ANTHROPIC_API_KEY (Messages) and
    sent only to the upstream: it is not written to the file, a record or a log. Later sweeps replay the
    file offline with --script FILE, in all three variations (edit it to add `drift` and `changed`).

    \b
    Examples:
        paidtwice record --app agent:app --service Travel --handler quote \\
            --input '"How much is 120 EUR in USD?"' --app-dir examples/travel_agent \\
            --upstream https://api.openai.com/v1 --out travel.toml
        paidtwice sweep --app agent:app --service Travel --handler quote \\
            --input '"How much is 120 EUR in USD?"' --app-dir examples/travel_agent --script travel.toml
    """
    if not target.user_code:
        raise BadInput("give --app or --cmd (one of them)")
    if len(target.handlers) != 1 or "/" not in target.handlers[0]:
        raise BadInput("name the service and the handler: --service NAME --handler NAME")
    writable(out_path, "the recorded answers")
    with errors():
        calls = record_answers(target, upstream=upstream, record=out_path)
    echo_err(f"recorded {calls} model call(s) from {upstream}")
    click.echo(str(out_path))
