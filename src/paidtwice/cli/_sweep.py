"""`paidtwice sweep`: kill an agent (the deck's, your Python app, or a deployment in any language) at every
moment of a clean run and measure what each replay paid again."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import click

from paidtwice._words import agent_name, count
from paidtwice.cli._bad_input import BadInput
from paidtwice.cli._ci import CiOutputs, app_source, ci_outputs
from paidtwice.cli._errors import errors
from paidtwice.cli._options import (
    allow_undecided_option,
    check_outputs,
    cluster_option,
    echo_err,
    grouped,
    html_option,
    model_stub_options,
    output_width,
    records_option,
    retries_option,
    shard_option,
    wide_option,
    writable,
    write_report,
)
from paidtwice.cli._target import script_option, target_options, variation_option
from paidtwice.lab import DEFAULT_PRICE_MODEL, DEFAULT_RESTART_DELAY, Lab
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
from paidtwice.targets import TargetSpec

__all__ = ["sweep"]


@dataclass(frozen=True)
class AnswerOptions:
    """Where the model's answers come from, as the sweep's options give it; `answers` makes the sweep's
    `Answers` of it once the target says whose code is swept."""

    scripts: tuple[str, ...]
    """--script: the deck's scripts by name, or the user's one script file (or `auto`)."""
    seed: int
    """--seed: what auto answers are derived from."""
    write_script: Path | None
    """--write-script: where auto answers are written as a script file."""
    record_path: Path | None
    """--record: where a real model's answers are written."""
    upstream: str | None
    """--upstream: the real model."""
    every_tool: bool
    """--every-tool: each tool no clean run called gets runs whose first answer calls it."""
    variations: tuple[str, ...]
    """--variation: the script file's variations swept."""

    def answers(self, target: TargetSpec) -> Answers:
        """The sweep's answers, once the files they go to are writable (`BadInput` else); said on stderr."""
        user_code = target.user_code
        if not user_code and (target.handlers or self.variations):
            raise BadInput("--service, --handler and --variation go with --app or --cmd")
        if user_code and len(self.scripts) > 1:
            kind = "app" if target.command is None else "cmd"
            raise BadInput(f"with --{kind}, give one script file (--script FILE) or none (auto answers)")
        auto = self.scripts in ((), (AUTO,))
        if self.write_script is not None and (not user_code or not auto):
            raise BadInput(
                "--write-script writes auto answers: it goes with --app or --cmd and no --script FILE"
            )
        writable(self.write_script, "the script file")
        writable(self.record_path, "the recorded answers")
        if (self.record_path is None) != (self.upstream is None):
            raise BadInput("recording needs both the file (--record FILE) and the model (--upstream URL)")
        if self.every_tool and (not user_code or not auto or self.record_path is not None):
            raise BadInput(
                "--every-tool makes auto answers call each tool: it goes with --app or --cmd, no --script "
                "FILE and no --record"
            )
        if self.record_path is not None:
            echo_err(f"answers: recorded from {self.upstream}, each call once, into {self.record_path}")
        elif user_code and auto:
            echo_err(
                f"answers: auto, made from each request (seed {self.seed}; --seed to change, --script FILE "
                "to pin)"
            )
        return Answers(
            # The deck's agent takes the stub's scripts by name; your own code, one script file's variations
            # or auto answers.
            script=self.scripts[0] if user_code and self.scripts else None,
            variations=(self.variations if user_code else self.scripts) or VARIATIONS,
            seed=self.seed,
            write_script=self.write_script,
            upstream=self.upstream,
            record=self.record_path,
            every_tool=self.every_tool,
        )


@click.command("sweep")
@target_options(approvals=True, modes="many")
@grouped(
    "answers",
    AnswerOptions,
    [
        script_option(many=True),
        click.option(
            "--seed",
            type=int,
            default=DEFAULT_SEED,
            show_default=True,
            help="With auto answers: what every answer is derived from (the same seed answers the same).",
        ),
        click.option(
            "--write-script",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            metavar="FILE",
            help="With auto answers: write the answers given to FILE as a script file (TOML for .toml, else "
            "JSON), to read, edit and pass with --script.",
        ),
        click.option(
            "--record",
            "record_path",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            metavar="FILE",
            help="With --upstream: the model's answers come from a real model, each call once, and are "
            "written to FILE as a script file later sweeps replay offline (see `paidtwice record`).",
        ),
        click.option(
            "--upstream",
            metavar="URL",
            default=None,
            help="With --record: the real model's base URL (OpenAI-, Responses- or Anthropic-compatible), "
            "its key read from OPENAI_API_KEY or ANTHROPIC_API_KEY.",
        ),
        click.option(
            "--every-tool",
            is_flag=True,
            help="With auto answers: once swept, each tool the model was offered that no clean run called "
            "gets a clean run per variation whose first answer calls it, and that run's points are swept "
            "too, so what follows every tool is swept (script VARIATION+TOOL; each such run adds its "
            "points to the sweep's).",
        ),
        variation_option(many=True),
    ],
)
@grouped(
    "kills",
    KillPlan,
    [
        click.option(
            "--restart-delay",
            type=click.FloatRange(min=0),
            default=DEFAULT_RESTART_DELAY,
            show_default=True,
            help="Seconds the agent stays down after each kill.",
        ),
        click.option(
            "--parallel",
            type=click.IntRange(min=1),
            default=16,
            show_default=True,
            help="Crash points run at once.",
        ),
        retries_option,
        shard_option,
    ],
)
@records_option(
    "Where every point's record is written, after each finished point "
    "(default: RESULTS_DIR/sweep-TIME-PID.json).",
    stem="sweep",
)
@click.option(
    "--check",
    is_flag=True,
    help="Exit 1 when any crash point pays twice, or is undecided (its kill not placed after its retries, "
    "its replay unable to finish) unless --allow-undecided: for CI.",
)
@allow_undecided_option
@html_option()
@click.option(
    "--save-journals",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Write each point's final journal file here and, beside it (NAME.prefix.json), the journal as it "
    "stood when the kill landed.",
)
@model_stub_options
@click.option(
    "--crash-rate",
    type=click.FloatRange(min=0),
    default=None,
    metavar="R",
    help="Crashes per 1,000 invocations: also print the expected extra cost per 1,000 invocations.",
)
@cluster_option
@ci_outputs()
@wide_option
def sweep(
    target: TargetSpec,
    answers: AnswerOptions,
    kills: KillPlan,
    sink: RecordSink,
    check: bool,
    allow_undecided: bool,
    html_path: Path | None,
    save_journals: Path | None,
    model: ModelStub,
    crash_rate: float | None,
    cluster: int,
    outputs: CiOutputs,
    wide: bool,
) -> None:
    """Kill the agent at every moment of a clean run and measure what survives and what is paid again.

    From a clean run's timeline come the crash points: after each journal entry, in flight inside each
    model call and each step, in each durable pause. Each is killed, restarted and measured against the
    clean run, all at once on one server. Prints a matrix per mode and script, then the summary. A point
    whose kill missed its moment is run again (--retries times at most), then, if it still missed, says so
    and why ("could not place, because ..."); its figures are a real crash's, at another moment. With
    --check, exit 1 when a point paid twice for work that had completed (a model call outside the journal,
    a step run again; never a call cut off in flight), or when a point stayed undecided (not placed, or its
    replay could not finish), naming the points, unless --allow-undecided; 2 on bad input; otherwise 0.

    After the matrices, what the sweep reached of each handler and what not: the tools offered and those
    the answers called, the waits resolved. With --every-tool, each tool no clean run called gets runs of
    its own (script VARIATION+TOOL), whose first answer calls it, swept as the others.

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
        paidtwice sweep --app agent:app --app-dir tests/sweep/coverage_agent --variation steady \\
            --input '"A weekend in Paris"' --every-tool
        paidtwice sweep --app agent:app --handler Approval/refund --input '"a refund"' \\
            --resolve '{"approved": true, "reviewer": "ann"}' --resolve-after 2 \\
            --app-dir tests/sweep/approval_agent --script tests/sweep/approval_agent/script.toml --check
        paidtwice sweep --cmd 'node agent.ts' --cwd examples/ts_agent --service Agent --handler run \\
            --input '"What should I wear in Paris today?"' --script examples/ts_agent/script.toml
    """
    chosen = answers.answers(target)
    check_outputs(sink.path, html_path, journals=save_journals)
    with errors():
        matrices = _swept(
            target, chosen, model, kills, sink, journals=save_journals, cluster=cluster, check=check
        )
    points = [p for m in matrices for p in m.points]
    status = _print_sweep(
        matrices,
        json_path=sink.path,
        check=check,
        allow_undecided=allow_undecided,
        retries=kills.retries,
        crash_rate=crash_rate,
        html_path=html_path,
        width=output_width(wide),
    )
    _emit_ci(outputs, target, points, allow_undecided=allow_undecided)
    sys.exit(status)


def _swept(
    target: TargetSpec,
    answers: Answers,
    model: ModelStub,
    kills: KillPlan,
    sink: RecordSink,
    *,
    journals: Path | None,
    cluster: int,
    check: bool,
) -> list[SweepMatrix]:
    """The sweep's matrices, each point's record on disk (and its journals saved) as soon as it finished,
    then all of them in the matrices' order."""
    with ExitStack() as stack:
        lab = None
        if journals is not None:
            # The sweep's lab is ours, so its server still runs when each point's journal is captured.
            priced = model.price_model or DEFAULT_PRICE_MODEL
            lab = stack.enter_context(Lab(echo=echo_err, price_model=priced, cluster=cluster))
        stack.enter_context(sink)
        on_point = _point_done(sink, journals, lab)
        # A command that cannot be swept leaves its log beside the records.
        target = dataclasses.replace(target, results_dir=sink.results_dir)
        matrices = run_sweep(
            target, answers=answers, model=model, kills=kills, lab=lab, cluster=cluster, on_point=on_point
        )
        points = [p for m in matrices for p in m.points]
        if check and not points:
            raise BadInput("; ".join(_unswept(matrices)) or "--check found no crash point to check")
        sink.replace(points)
    return matrices


def _emit_ci(
    outputs: CiOutputs, target: TargetSpec, points: list[PointResult], *, allow_undecided: bool
) -> None:
    """The points as findings and test cases; a finding names its handler's line where SARIF or GitHub show
    it (read from the app, so only then)."""
    source = None
    if outputs.sarif or outputs.github:
        source = app_source(target.app, Path(target.app_dir or "."), Path.cwd())
    findings = sweep_findings(points, source, allow_undecided=allow_undecided)
    outputs.emit(findings, sweep_cases(points, allow_undecided=allow_undecided))


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
    wall = max((m.wall_time for m in matrices), default=0.0)
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
