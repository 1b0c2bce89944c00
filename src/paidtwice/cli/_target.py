"""The options that name what a command runs, defined once for every command: the target (`target_options`,
handed to the command as one `TargetSpec`) and the stub's answers (`script_option`, `variation_option`).

A new kind of target is one option here (as --cmd is) and one branch of `TargetSpec`: every command that
takes a target takes the new kind, with the same name and meaning.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Literal

import click

from paidtwice.cli._bad_input import BadInput
from paidtwice.cli._options import Option, grouped
from paidtwice.stub import AUTO, SCRIPTS, VARIATIONS
from paidtwice.targets import DECK_MODES, Resolution, TargetSpec

__all__ = ["script_option", "target_options", "variation_option"]


def target_options(
    *,
    command: bool = True,
    calls: bool = True,
    approvals: bool = False,
    modes: Literal["many", "one"] | None = None,
    app_dir: Path | None = Path("."),
) -> Option:
    """--app (and --cmd, its --cwd and --port-env), --app-dir, and with `calls` the handler called
    (--service, --handler, --input, --key), with `approvals` how its waits are answered (--state, --resolve,
    --resolve-after), with `modes` the deck agent's mode (--mode: several, or one): handed to the command as
    `target`, a `TargetSpec`, checked (bad input raises `BadInput` before anything starts)."""
    options: list[Option] = [
        click.option(
            "--app",
            metavar="MODULE[:APP]",
            default=None,
            help="Your own Restate app instead of the deck's agent, served by paidtwice's host: MODULE:APP "
            "that app object, MODULE every Restate service the module defines (its one app, if it holds "
            "one).",
        ),
        click.option(
            "--app-dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=app_dir,
            show_default=app_dir is not None,
            help="With --app: the directory MODULE is imported from"
            + (" (default: the current one)." if app_dir is None else "."),
        ),
    ]
    if command:
        options += _command_options()
    if calls:
        options += _call_options()
    if approvals:
        options += _approval_options()
    if modes is not None:
        options.append(
            click.option(
                "--mode",
                "modes",
                multiple=modes == "many",
                type=click.Choice(DECK_MODES),
                default=None,
                help="Without --app or --cmd: the deck agent's mode"
                + ("s (default: both)." if modes == "many" else "."),
            )
        )
    kinds = f"--app{' or --cmd' if command else ''}"
    return grouped("target", functools.partial(_spec, kinds=kinds), options)


def _command_options() -> list[Option]:
    return [
        click.option(
            "--cmd",
            "command",
            metavar="CMD",
            help="A deployment in any language started by this shell command (e.g. 'node agent.ts'), told "
            "its port in $PORT (see --port-env; a Node HTTP/2 server on a fixed port is moved to it), the "
            "stub in OPENAI_BASE_URL/ANTHROPIC_BASE_URL, Node 22 first on PATH.",
        ),
        click.option(
            "--cwd",
            "cmd_dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help="With --cmd: the directory the command runs in (default: the current one).",
        ),
        click.option(
            "--port-env",
            default="PORT",
            show_default=True,
            metavar="VAR",
            help="With --cmd: the port's variable.",
        ),
    ]


def _call_options() -> list[Option]:
    return [
        click.option("--service", metavar="NAME", help="With --app or --cmd: the service to call."),
        click.option(
            "--handler",
            "handlers",
            multiple=True,
            metavar="NAME|SERVICE/HANDLER",
            help="With --app or --cmd: the handler to call, NAME of --service or SERVICE/HANDLER (a sweep "
            "takes several). Default: every handler the app or the command's deployment registers (its one, "
            "where the command calls one).",
        ),
        click.option(
            "--input",
            "input_json",
            metavar="JSON",
            default="null",
            help="With --app or --cmd: the handler's input.",
        ),
        click.option(
            "--key",
            metavar="KEY",
            default=None,
            help="With --app or --cmd: the key a Virtual Object's or a Workflow's handler is called with "
            "(default: 'paidtwice' when the service is keyed; a soak's invocations each have their own, "
            "KEY-1, KEY-2, ...).",
        ),
    ]


def _approval_options() -> list[Option]:
    return [
        click.option(
            "--state",
            "state_json",
            metavar="JSON",
            default=None,
            help="With --app or --cmd: a Virtual Object's state, set under its key before the clean run and "
            "every point (a JSON object of names and values, each as the SDK's JSON serde writes it), so a "
            "later message of a conversation is swept; default: the script file's [state] table, if any.",
        ),
        click.option(
            "--resolve",
            metavar="JSON|never",
            default=None,
            help="With --app or --cmd: the value every awakeable and Workflow promise the handler waits for "
            "is resolved with (default: the script file's [[awakeable]] values, else one valid against its "
            "type); 'never' resolves nothing, so a timeout raced against the approval is swept taking the "
            "timeout.",
        ),
        click.option(
            "--resolve-after",
            type=click.FloatRange(min=0),
            default=Resolution.after,
            show_default=True,
            metavar="SECONDS",
            help="With --app or --cmd: seconds from the handler beginning to wait to the approval.",
        ),
    ]


def _spec(
    *,
    kinds: str,
    app: str | None,
    app_dir: Path | None,
    command: str | None = None,
    cmd_dir: Path | None = None,
    port_env: str = "PORT",
    service: str | None = None,
    handlers: tuple[str, ...] = (),
    input_json: str = "null",
    key: str | None = None,
    state_json: str | None = None,
    resolve: str | None = None,
    resolve_after: float = Resolution.after,
    modes: tuple[str, ...] | str | None = None,
) -> TargetSpec:
    """The target the options name, once they are checked together."""
    if app is not None and command is not None:
        raise BadInput("give --app or --cmd, not both")
    if command is None and cmd_dir is not None:
        raise BadInput("--cwd goes with --cmd")
    # Else the app's import fails for want of its module, which blames the module, not the directory.
    if app_dir is not None and not app_dir.is_dir():
        raise BadInput(f"--app-dir {app_dir} is not a directory")
    if cmd_dir is not None and not cmd_dir.is_dir():
        raise BadInput(f"--cwd {cmd_dir} is not a directory")
    user_code = app is not None or command is not None
    for flag, given in (("--key", key), ("--state", state_json), ("--resolve", resolve)):
        if given is not None and not user_code:
            raise BadInput(f"{flag} goes with {kinds}")
    if isinstance(modes, str) and user_code:
        raise BadInput(f"--mode goes with the deck's agent (no {kinds})")
    # --mode NAME, --mode given several times, several not given (both), or one not given (none).
    deck_modes = (modes,) if isinstance(modes, str) else modes or (DECK_MODES if modes is not None else ())
    return TargetSpec(
        app=app,
        command=command,
        port_env=port_env,
        handlers=tuple(_named(service, handlers)),
        input=_json("--input", input_json),
        key=key,
        state=None if state_json is None else _state(state_json),
        resolution=_resolution(resolve, resolve_after),
        modes=deck_modes,
        app_dir=(cmd_dir or Path(".")) if command is not None else app_dir,
    )


def _named(service: str | None, handlers: tuple[str, ...]) -> list[str]:
    """The handlers named, each as SERVICE/HANDLER (a bare NAME is --service's); SERVICE alone for every
    handler of --service."""
    named = []
    for item in handlers:
        if "/" in item:
            named.append(item)
        elif service:
            named.append(f"{service}/{item}")
        else:
            raise BadInput(f"--handler {item}: name its service (--handler SERVICE/{item}, or --service)")
    if service and not handlers:
        named.append(service)
    return named


def _json(flag: str, text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as err:
        raise BadInput(f"{flag} is not JSON: {err}") from None


def _resolution(text: str | None, after: float) -> Resolution:
    """--resolve JSON|never and --resolve-after: how the handler's awakeables and promises are answered."""
    if text is None or text == "never":
        return Resolution(never=text == "never", after=after)
    try:
        json.loads(text)
    except ValueError as err:
        raise BadInput(f"--resolve is neither JSON nor 'never': {err}") from None
    return Resolution(value=text, after=after)


def _state(text: str) -> dict[str, Any]:
    """--state: a JSON object of the state's names and values."""
    state = _json("--state", text)
    if not isinstance(state, dict):
        raise BadInput('--state must be a JSON object of names and values, e.g. \'{"history": ["Hi"]}\'')
    return state


def script_option(*, many: bool = False, default: str | None = "steady") -> Option:
    """--script: how the stub model answers; `many` (the sweep) takes several of the deck's scripts."""
    return click.option(
        "--script",
        "scripts" if many else "script",
        multiple=many,
        default=None if many else default,
        show_default=not many and default is not None,
        metavar="NAME|FILE",
        help=f"How the stub model answers: a stub script of the deck's agent ({', '.join(SCRIPTS)}"
        + ("; several, default: all three" if many else "")
        + "), or with --app or --cmd a script file giving the model's answer to each call (a `[[turn]]` "
        f"matched by `when`, or by its position in the conversation), or `{AUTO}`: answers made from each "
        "request (a tool call with arguments valid against the tool's schema, then a final answer).",
    )


def variation_option(*, many: bool = False) -> Option:
    """--variation: which of a script file's variations answers; `many` (the sweep) takes several."""
    return click.option(
        "--variation",
        "variations" if many else "variation",
        multiple=many,
        type=click.Choice(VARIATIONS),
        default=None if many else "steady",
        show_default=not many,
        help="With a script file: the variation"
        + ("s to sweep (default: all three)." if many else " that answers."),
    )
