"""`paidtwice sweep`: kill an agent (the deck's, your Python app, or a deployment in any language) at every
moment of a clean run and measure what each replay paid again."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from paidtwice._words import agent_name, count
from paidtwice.cli._bad_input import BadInput
from paidtwice.cli._ci import CiOutputs, app_source, ci_options
from paidtwice.cli._errors import errors
from paidtwice.cli._options import (
    allow_undecided_option,
    app_dir_option,
    check_outputs,
    cluster_option,
    cmd_dir_option,
    echo_err,
    html_option,
    input_option,
    json_option,
    model_latency_option,
    output_width,
    parse_input,
    port_env_option,
    price_model_option,
    results_dir_option,
    retries_option,
    service_option,
    shard_option,
    wide_option,
    writable,
    write_report,
)
from paidtwice.lab import DEFAULT_RESTART_DELAY, Lab
from paidtwice.replay import save_point_journals
from paidtwice.report import (
    format_crash_cost,
    format_handler_summary,
    format_sweep,
    sweep_cases,
    sweep_findings,
    sweep_sections,
)
from paidtwice.results import KillsPlaced, PointResult, RecordSink, SweepMatrix
from paidtwice.stub import AUTO, DEFAULT_SEED, VARIATIONS
from paidtwice.sweep import Answers, KillPlan, ModelStub, short_pause
from paidtwice.sweep import sweep as run_sweep
from paidtwice.targets import Resolution, TargetSpec

__all__ = ["sweep"]


@click.command("sweep")
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
    "With --app or --cmd: the script file giving the model's answer to each call (a `[[turn]]` matched by "
    "`when`, or by its position in the conversation), or `auto` (the default): answers made from each "
    "request (a tool call with arguments valid against the tool's schema, then a final answer).",
)
@click.option(
    "--seed",
    type=int,
    default=DEFAULT_SEED,
    show_default=True,
    help="With auto answers: what every answer is derived from (the same seed answers the same).",
)
@click.option(
    "--write-script",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="With auto answers: write the answers given to FILE as a script file (TOML for .toml, else JSON), "
    "to read, edit and pass with --script.",
)
@click.option(
    "--record",
    "record_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="With --upstream: the model's answers come from a real model, each call once, and are written to "
    "FILE as a script file later sweeps replay offline (see `paidtwice record`).",
)
@click.option(
    "--upstream",
    metavar="URL",
    default=None,
    help="With --record: the real model's base URL (OpenAI-, Responses- or Anthropic-compatible), its key "
    "read from OPENAI_API_KEY or ANTHROPIC_API_KEY.",
)
@click.option(
    "--variation",
    "variations",
    multiple=True,
    type=click.Choice(VARIATIONS),
    help="With --app: the script file's variations to sweep (default: all three).",
)
@click.option(
    "--app",
    metavar="MODULE:APP",
    help="Sweep your own Restate app instead of the deck's agent: MODULE:APP serves that app object as "
    "given, MODULE alone every service the module defines. Without --service/--handler, every handler "
    "the app registers is swept.",
)
@click.option(
    "--cmd",
    "command",
    metavar="CMD",
    help="Sweep a deployment in any language started by this shell command (e.g. 'node agent.ts'), told its "
    "port in $PORT (see --port-env; a Node HTTP/2 server on a fixed port is moved to it), the stub in "
    "OPENAI_BASE_URL/ANTHROPIC_BASE_URL, Node 22 first on PATH. Without --service/--handler, every handler "
    "its deployment registers is swept.",
)
@port_env_option
@cmd_dir_option
@service_option
@click.option(
    "--handler",
    "handlers",
    multiple=True,
    metavar="SERVICE/HANDLER",
    help="With --app or --cmd: a handler to sweep (repeatable); NAME alone with --service. Default: every "
    "handler the app or the command's deployment registers.",
)
@input_option
@click.option(
    "--key",
    metavar="KEY",
    default=None,
    help="With --app or --cmd: the key a Virtual Object's or a Workflow's handler is called with "
    "(default: 'paidtwice' when the service is keyed).",
)
@click.option(
    "--state",
    "state_json",
    metavar="JSON",
    default=None,
    help="With --app or --cmd: a Virtual Object's state, set under its key before the clean run and every "
    "point (a JSON object of names and values, each as the SDK's JSON serde writes it), so a later message "
    "of a conversation is swept; default: the script file's [state] table, if any.",
)
@click.option(
    "--resolve",
    "resolve",
    metavar="JSON|never",
    default=None,
    help="With --app or --cmd: the value every awakeable and Workflow promise the handler waits for is "
    "resolved with "
    "(default: the script file's [[awakeable]] values, else one valid against its type); 'never' resolves "
    "nothing, so a timeout raced against the approval is swept taking the timeout.",
)
@click.option(
    "--resolve-after",
    type=click.FloatRange(min=0),
    default=Resolution.after,
    show_default=True,
    metavar="SECONDS",
    help="With --app or --cmd: seconds from the handler beginning to wait to the approval.",
)
@app_dir_option
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
@retries_option
@json_option(
    "Where every point's record is written, after each finished point "
    "(default: RESULTS_DIR/sweep-TIME-PID.json)."
)
@results_dir_option
@click.option(
    "--check",
    is_flag=True,
    help="Exit 1 when any crash point pays twice, or is undecided (its kill not placed after its retries, "
    "its replay unable to finish) unless --allow-undecided: for CI.",
)
@allow_undecided_option
@html_option
@click.option(
    "--save-journals",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Write each point's final journal file here and, beside it (NAME.prefix.json), the journal as it "
    "stood when the kill landed.",
)
@price_model_option
@model_latency_option
@click.option(
    "--crash-rate",
    type=click.FloatRange(min=0),
    default=None,
    metavar="R",
    help="Crashes per 1,000 invocations: also print the expected extra cost per 1,000 invocations.",
)
@cluster_option
@shard_option
@ci_options()
@wide_option
def sweep(**given: Any) -> None:
    """Kill the agent at every moment of a clean run and measure what survives and what is paid again.

    From a clean run's timeline come the crash points: after each journal entry, in flight inside each
    model call and each step, in each durable pause. Each is killed, restarted and measured against the
    clean run, all at once on one server. Prints a matrix per mode and script, then the summary. A point
    whose kill missed its moment is run again (--retries times at most), then, if it still missed, says so
    and why ("could not place, because ..."); its figures are a real crash's, at another moment. With
    --check, exit 1 when a point paid twice for work that had completed (a model call outside the journal,
    a step run again; never a call cut off in flight), or when a point stayed undecided (not placed, or its
    replay could not finish), naming the points, unless --allow-undecided; 2 on bad input; otherwise 0.

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
        paidtwice sweep --app agent --handler Chain/run --handler Chain/run_naive \\
            --input '"Revenue grew 45%"' --script examples/chain_agent/script.toml \\
            --app-dir examples/chain_agent --shard 1/2 --sarif sweep.sarif --junit sweep.xml
        paidtwice sweep --app agent:app --handler Approval/refund --input '"a refund"' \\
            --resolve '{"approved": true, "reviewer": "ann"}' --resolve-after 2 \\
            --app-dir tests/sweep/approval_agent --script tests/sweep/approval_agent/script.toml --check
        paidtwice sweep --cmd 'node agent.ts' --cwd examples/ts_agent --service Agent --handler run \\
            --input '"What should I wear in Paris today?"' --script examples/ts_agent/script.toml
    """
    cli = _Given(**given)
    named = _handlers(cli.service, cli.handlers)
    payload = _own_input(cli, named)
    outputs = CiOutputs(cli.sarif_path, cli.junit_path, cli.output_format == "github")
    outputs.check()
    what = _what(cli, named, payload)
    sink = RecordSink.at(cli.json_path, results_dir=cli.results_dir, stem="sweep")
    check_outputs(sink.path, cli.html_path, journals=cli.save_journals)
    answers = _answers(cli, what)
    model = ModelStub(latency=cli.model_latency or 0.0, price_model=cli.price_model)
    kills = KillPlan(
        restart_delay=cli.restart_delay, parallel=cli.parallel, shard=cli.shard, retries=cli.retries
    )
    with errors(), ExitStack() as stack:
        lab = None
        if cli.save_journals is not None:
            # The sweep's lab is ours, so its server still runs when each point's journal is captured.
            lab = stack.enter_context(Lab(echo=echo_err, price_model=cli.price_model, cluster=cli.cluster))
        stack.enter_context(sink)
        on_point = _point_done(sink, cli.save_journals, lab)
        matrices = run_sweep(
            what, answers=answers, model=model, kills=kills, lab=lab, cluster=cli.cluster, on_point=on_point
        )
        points = [p for m in matrices for p in m.points]
        if cli.check and not points:
            unswept = "; ".join(_unswept(matrices))
            raise BadInput(unswept or "--check found no crash point to check")
        # The points as the matrices order them (they were added as each finished).
        sink.replace(points)
    status = _print_sweep(
        matrices,
        json_path=sink.path,
        check=cli.check,
        allow_undecided=cli.allow_undecided,
        retries=cli.retries,
        crash_rate=cli.crash_rate,
        html_path=cli.html_path,
        width=output_width(cli.wide),
    )
    source = app_source(cli.app, cli.app_dir, Path.cwd()) if outputs.sarif or outputs.github else None
    allow = cli.allow_undecided
    outputs.emit(
        sweep_findings(points, source, allow_undecided=allow), sweep_cases(points, allow_undecided=allow)
    )
    sys.exit(status)


@dataclass(frozen=True)
class _Given:
    """The command line as click parsed it, option by option; the sweep's option objects are built from it
    once (`_what`, `_answers`, `ModelStub`, `KillPlan`)."""

    modes: tuple[str, ...]
    scripts: tuple[str, ...]
    seed: int
    write_script: Path | None
    record_path: Path | None
    upstream: str | None
    variations: tuple[str, ...]
    app: str | None
    command: str | None
    port_env: str
    cmd_dir: Path | None
    service: str | None
    handlers: tuple[str, ...]
    input_json: str
    key: str | None
    state_json: str | None
    resolve: str | None
    resolve_after: float
    app_dir: Path
    restart_delay: float
    parallel: int
    retries: int
    json_path: Path | None
    results_dir: Path
    check: bool
    allow_undecided: bool
    html_path: Path | None
    save_journals: Path | None
    price_model: str
    model_latency: float | None
    crash_rate: float | None
    cluster: int
    shard: tuple[int, int] | None
    sarif_path: Path | None
    junit_path: Path | None
    output_format: str
    wide: bool

    @property
    def own(self) -> bool:
        return self.app is not None or self.command is not None


def _what(cli: _Given, named: list[str], payload: Any) -> TargetSpec:
    """What is swept, once the directories exist and --key, --state and --resolve go with what they need."""
    # Else the app's import fails for want of its module, which blames the module, not the directory.
    for flag, directory in (("--app-dir", cli.app_dir if cli.app else None), ("--cwd", cli.cmd_dir)):
        if directory is not None and not directory.is_dir():
            raise BadInput(f"{flag} {directory} is not a directory")
    if cli.key is not None and not cli.own:
        raise BadInput("--key goes with --app or --cmd")
    state = _state(cli.state_json) if cli.state_json is not None else None
    if state is not None and not cli.own:
        raise BadInput("--state goes with --app or --cmd")
    if cli.resolve is not None and not cli.own:
        raise BadInput("--resolve goes with --app or --cmd (the deck's agent waits for no approval)")
    return TargetSpec(
        app=cli.app,
        command=cli.command,
        port_env=cli.port_env,
        handlers=tuple(named),
        input=payload,
        key=cli.key,
        state=state,
        resolution=_resolution(cli.resolve, cli.resolve_after),
        modes=cli.modes or ("naive", "journaled"),
        app_dir=(cli.cmd_dir or Path(".")) if cli.command is not None else cli.app_dir,
    )


def _answers(cli: _Given, what: TargetSpec) -> Answers:
    """Where the model's answers come from, once the files they go to are writable; said on stderr."""
    auto = cli.scripts in ((), (AUTO,))
    if cli.write_script is not None and (not cli.own or not auto):
        raise BadInput("--write-script writes auto answers: it goes with --app or --cmd and no --script FILE")
    writable(cli.write_script, "the script file")
    writable(cli.record_path, "the recorded answers")
    if (cli.record_path is None) != (cli.upstream is None):
        raise BadInput("recording needs both the file (--record FILE) and the model (--upstream URL)")
    if cli.record_path is not None:
        echo_err(f"answers: recorded from {cli.upstream}, each call once, into {cli.record_path}")
    elif cli.own and auto:
        echo_err(
            f"answers: auto, made from each request (seed {cli.seed}; --seed to change, --script FILE to pin)"
        )
    return Answers(
        # The deck's agent takes the stub's scripts by name; your own code, one script file's variations
        # or auto answers.
        script=cli.scripts[0] if cli.own and cli.scripts else None,
        variations=(cli.variations if cli.own else cli.scripts) or VARIATIONS,
        seed=cli.seed,
        write_script=cli.write_script,
        upstream=cli.upstream,
        record=cli.record_path,
    )


def _handlers(service: str | None, handlers: tuple[str, ...]) -> list[str]:
    """The handlers named, each as SERVICE/HANDLER (a bare NAME is --service's)."""
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


def _resolution(text: str | None, after: float) -> Resolution:
    """--resolve JSON|never and --resolve-after: how the sweep answers the handler's approvals."""
    if text is None or text == "never":
        return Resolution(never=text == "never", after=after)
    try:
        json.loads(text)
    except ValueError as err:
        raise BadInput(f"--resolve is neither JSON nor 'never': {err}") from None
    return Resolution(value=text, after=after)


def _state(text: str) -> dict[str, Any]:
    """--state: a JSON object of the state's names and values."""
    try:
        state = json.loads(text)
    except ValueError as err:
        raise BadInput(f"--state is not JSON: {err}") from None
    if not isinstance(state, dict):
        raise BadInput('--state must be a JSON object of names and values, e.g. \'{"history": ["Hi"]}\'')
    return state


def _own_input(cli: _Given, named: list[str]) -> Any:
    """The handler's input for --app or --cmd (None for the deck's agent), after the options that go with
    them are checked: bad input raises `BadInput` before anything starts."""
    if cli.app is not None and cli.command is not None:
        raise BadInput("give --app or --cmd, not both")
    if cli.command is None and cli.cmd_dir is not None:
        raise BadInput("--cwd goes with --cmd")
    own = "--app" if cli.command is None else "--cmd"
    if not cli.own:
        if cli.service or named or cli.variations:
            raise BadInput("--service, --handler and --variation go with --app or --cmd")
        return None
    if len(cli.scripts) > 1:
        raise BadInput(f"with {own}, give one script file (--script FILE) or none (auto answers)")
    return parse_input(cli.input_json)


def _point_done(sink: RecordSink, journals: Path | None, lab: Lab | None) -> Callable[[PointResult], None]:
    """What is done with each point as soon as it is measured: its record on disk, its journals saved (with
    the lab, whose server still runs), a line on stderr."""

    def done(point: PointResult) -> None:
        sink.add(point)
        if journals is not None and lab is not None:
            save_point_journals(lab.sql, journals, point)
        echo_err(f"  {point.mode}/{point.script} #{point.order} {point.crash_point}: {point.status}")

    return done


def _unswept(matrices: list[SweepMatrix]) -> list[str]:
    """What could not be swept, and why, a line each."""
    return [
        f"{agent_name(m.mode)} ({m.script}): could not sweep, because {m.not_swept}"
        for m in matrices
        if m.not_swept
    ]


def _print_sweep(
    matrices: list[SweepMatrix],
    *,
    json_path: Path,
    check: bool,
    allow_undecided: bool = False,
    retries: int | None = None,
    crash_rate: float | None,
    html_path: Path | None,
    width: int | None,
) -> int:
    """The matrices (their records in `json_path`), the crash cost and the verdict; the exit status (1 with
    `check` when a point pays twice, or is undecided unless `allow_undecided`). `retries`: the bound each
    point had. The tables fit `width` (None: full)."""
    ordered = [p for m in matrices for p in m.points]
    swept = [m for m in matrices if not m.not_swept]
    unswept = _unswept(matrices)
    for matrix in swept:
        click.echo(format_sweep(matrix, width=width) + "\n")
    click.echo(format_crash_cost(swept, crash_rate, width=width) + "\n")
    if ordered:
        click.echo(format_handler_summary(ordered) + "\n")
    for line in unswept:
        # Not a verdict on that handler: nothing of it was measured. Said, with what it waits for.
        echo_err(line)
    wall = matrices[0].wall_time if matrices else 0.0
    click.echo(f"{count(len(ordered), 'crash point')} in {wall:.1f}s; every point's record: {json_path}")
    click.echo(KillsPlaced.of(ordered).words(retries))
    write_report(html_path, "paidtwice sweep", sweep_sections(ordered), [json_path])
    missed = [p for p in ordered if not p.confirmed]
    twice = [p for p in ordered if p.pays_twice]
    if missed:
        # Said with what the sweep saw instead; a check fails on it unless the user allows it (no verdict on
        # those moments, so no pass either).
        undecided = "undecided, allowed (--allow-undecided)" if allow_undecided or not check else "undecided"
        echo_err(f"{count(len(missed), 'crash point')} {undecided} (see 'landed'):")
        for point in missed:
            tries = f" after {count(point.retries, 'retry', 'retries')}" if point.retries else ""
            why = short_pause(point) or point.not_placed or "the kill did not land at the moment"
            echo_err(
                f"  {point.mode}/{point.script} #{point.order} {point.crash_point}: "
                f"could not place{tries}, because {why}"
            )
    if check and twice:
        echo_err(f"{count(len(twice), 'crash point')} paid twice for completed work")
    failed = bool(twice) or (bool(missed) and not allow_undecided)
    if check and missed and not allow_undecided:
        echo_err(
            f"check fails: {count(len(missed), 'crash point')} undecided (--allow-undecided passes them)"
        )
    return 1 if check and failed else 0
