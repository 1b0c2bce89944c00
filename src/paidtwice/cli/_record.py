"""`paidtwice record`: a clean run answered by a real model, its answers written as a script file."""

from __future__ import annotations

from pathlib import Path

import click

from paidtwice.cli._bad_input import BadInput
from paidtwice.cli._errors import errors
from paidtwice.cli._options import (
    app_dir_option,
    cmd_dir_option,
    echo_err,
    handler_option,
    input_option,
    parse_input,
    port_env_option,
    service_option,
    writable,
)
from paidtwice.sweep import record_answers
from paidtwice.targets import TargetSpec

__all__ = ["record"]


@click.command("record")
@click.option("--app", metavar="MODULE:APP", help="Your Restate app, served by paidtwice's host.")
@click.option("--cmd", "command", metavar="CMD", help="Or a deployment in any language started by CMD.")
@port_env_option
@cmd_dir_option
@service_option
@handler_option
@input_option
@click.option("--key", metavar="KEY", default=None, help="The key of a Virtual Object's or Workflow's call.")
@app_dir_option
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
def record(
    app: str | None,
    command: str | None,
    port_env: str,
    cmd_dir: Path | None,
    service: str | None,
    handler: str | None,
    input_json: str,
    key: str | None,
    app_dir: Path,
    upstream: str,
    out_path: Path,
) -> None:
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
    if (app is None) == (command is None):
        raise BadInput("give --app or --cmd (one of them)")
    if not service or not handler:
        raise BadInput("name the service and the handler: --service NAME --handler NAME")
    payload = parse_input(input_json)
    writable(out_path, "the recorded answers")
    with errors():
        what = TargetSpec(
            app=app,
            command=command,
            service=service,
            handler=handler,
            input=payload,
            app_dir=(cmd_dir or Path(".")) if command is not None else app_dir,
            port_env=port_env,
            key=key,
        )
        calls = record_answers(what, upstream=upstream, record=out_path)
    echo_err(f"recorded {calls} model call(s) from {upstream}")
    click.echo(str(out_path))
