"""The sweep: "if the agent dies right now, what survives?", measured at every moment a crash can land.

A clean run of the target gives its timeline, read through the target's trace: the host's step log (every
model request, context operation and step execution, in order) or, for a command's deployment, the wire,
beside the journal. From it come the distinct crash points (`paidtwice.targets`: `_timeline`,
`_wire_timeline`): after each journal entry (before the agent's next action), in flight inside each model
call and each step, in flight inside calls made at once (parallel calls, each held), and in each durable
pause. Each point is a run of its own (`_runs`), concurrently on one
server and one stub: the agent is stopped at the moment (host gates, held stub calls, or the pause), the lab
confirms from the journal and the ledgers that it is there, SIGKILLs it, restarts it after the restart delay,
waits until the invocation completes or pauses, and counts what the replay paid again against the clean run.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from paidtwice._exceptions import UsageError
from paidtwice.engine import epoch
from paidtwice.lab import DEFAULT_PRICE_MODEL, Lab, Poller, check_price_model
from paidtwice.results import CleanRun, CrashPoint, PointResult, SweepMatrix
from paidtwice.stub import AutoBook, Script, script_by_name
from paidtwice.sweep._callees import Companions
from paidtwice.sweep._kept import kept_durations, kept_plan, plan_key
from paidtwice.sweep._not_swept import made_up_input
from paidtwice.sweep._options import Answers, KillPlan, ModelStub, Shard, shard_of
from paidtwice.sweep._point import Parked, park, point_run
from paidtwice.sweep._reach import reach_every_tool
from paidtwice.sweep._runs import CleanRunFails, NotSwept, SweepRun, clean_run
from paidtwice.sweep._schedule import Baseline, Matrix, ParkedRun, PlanSoFar, Schedule
from paidtwice.targets import Target, TargetSpec

__all__ = [
    "Answers",
    "CrashPoint",
    "KillPlan",
    "ModelStub",
    "PointResult",
    "Shard",
    "SweepMatrix",
    "TargetSpec",
    "deck_scripts",
    "record_answers",
    "shard_of",
    "sweep",
    "sweep_targets",
]


TargetScript = tuple[Target, str, Script]
"""One matrix of a sweep: the target, the script's name, the script."""


def sweep_targets(
    lab: Lab,
    *,
    targets: Sequence[Target],
    scripts: Sequence[tuple[str, Script]],
    kills: KillPlan = KillPlan(),
    model: ModelStub = ModelStub(),
    on_point: Callable[[PointResult], None] | None = None,
) -> list[SweepMatrix]:
    """Sweep every target under every script; one matrix per (target, script), points in time order.
    With `kills.shard` (K, N), only the K-th of N shares of the crash points (every clean run is made, for
    the points come from it); the N shards' points together are the whole sweep's.

    Clean runs start at once; the points of a plan kept from the last sweep of the same code start beside
    them, the others as soon as their clean run shows them (`_schedule`), `kills.parallel` runs at a
    time, each point on an agent, lane and invocation of its own. `on_point` sees each result as soon as it
    is measured. The calls are priced as `model.price_model` says, else as the lab's price model.
    """
    pairs: list[TargetScript] = [(t, name, s) for t in targets for name, s in scripts]
    return sweep_pairs(lab, pairs, kills=kills, model=model, on_point=on_point)


def sweep_pairs(
    lab: Lab,
    pairs: Sequence[TargetScript],
    *,
    kills: KillPlan,
    model: ModelStub,
    on_point: Callable[[PointResult], None] | None,
    reaching: bool = False,
    started: float | None = None,
) -> list[SweepMatrix]:
    """`sweep_targets` of the (target, script name, script) pairs given. `reaching`: the scripts are reach
    scripts (`--every-tool`), so a clean run that fails or is not swept is said in its matrix, never raised:
    the answers that made it are paidtwice's choice, not the user's. The matrices' wall time counts from
    `started` (a reach round's, from the sweep's start), else from now."""
    priced = check_price_model(model.price_model) if model.price_model else lab.price_model
    model = dataclasses.replace(model, price_model=priced)
    poller = Poller(lambda: lab.sql, lab.cancelled)
    companions = Companions()
    started = time.time() if started is None else started
    stop = threading.Event()
    # Service names, lanes and work directories are the sweep's own, also when a lab sweeps more than once.
    sweep_id = lab.next_id()
    matrices = [_matrix(lab, pair, model, kills) for pair in pairs]

    def run_clean(i: int, on_plan: PlanSoFar | None) -> tuple[CleanRun, str, list[CrashPoint] | None, bool]:
        target, name, script = pairs[i]
        tag = f"{_tag(sweep_id, i, target, name)}_clean"

        def so_far(run: SweepRun, told: PlanSoFar) -> bool:
            plan = _plan_so_far(run)
            return told(plan) if plan else False

        progress = None if on_plan is None else functools.partial(so_far, told=on_plan)
        try:
            record, run = clean_run(
                lab, stop, poller, target, script, tag, model, companions, on_progress=progress
            )
        except NotSwept as err:
            # One handler's wait nothing resolves, or its run ended before any model call: its points are
            # not swept, the others' are.
            return _NO_CLEAN_RUN, str(err), None, False
        except CleanRunFails as err:
            # On the user's own input, or for a handler they named, a failing run is theirs to fix; on an
            # input paidtwice made up it may be the input: that handler is listed, the others swept.
            if reaching:
                return _NO_CLEAN_RUN, f"{err} (answers {name})", None, False
            if not target.input_made:
                raise
            return _NO_CLEAN_RUN, made_up_input(err, target.input), None, False
        return record, "", _plan(run), not run.serves_others()

    def run_point(
        i: int,
        point: CrashPoint,
        suffix: str,
        stops: threading.Event,
        baseline: Baseline | None,
        parked: ParkedRun | None = None,
    ) -> PointResult:
        assert parked is None or isinstance(parked, Parked)
        target, name, script = pairs[i]
        tag = f"{_tag(sweep_id, i, target, name)}_{suffix}"
        record = matrices[i].clean or _NO_CLEAN_RUN
        return point_run(
            lab, stops, poller, target, script, name, record, point,
            tag=tag, kills=kills, model=model, baseline=baseline, parked=parked,
        )  # fmt: skip

    def park_of(i: int, suffix: str) -> Parked:
        target, name, script = pairs[i]
        return park(lab, target, script, tag=f"{_tag(sweep_id, i, target, name)}_{suffix}", model=model)

    try:
        if not pairs:
            raise UsageError("nothing to sweep")
        schedule = Schedule(lab, matrices, kills=kills, stop=stop, on_point=on_point, park_of=park_of)
        # Once the clean runs are over, only the agent registered last for each of the app's other
        # services stays up; no point of a plan made after the clean runs has started yet.
        points = schedule.run(run_clean, run_point, after_cleans=companions.prune)
    finally:
        poller.stop()
        companions.close()
    if all(m.plan is None for m in matrices) and not reaching:
        raise NotSwept("; ".join(dict.fromkeys(m.not_swept for m in matrices if m.not_swept)))
    wall = round(time.time() - started, 3)
    return [
        SweepMatrix(target.mode, name, m.clean or _NO_CLEAN_RUN, swept, wall, not_swept=m.not_swept)
        for (target, name, _), m, swept in zip(pairs, matrices, points, strict=True)
    ]


def _matrix(lab: Lab, pair: TargetScript, model: ModelStub, kills: KillPlan) -> Matrix:
    """A matrix of the sweep, with the plan kept from the last sweep of the same code, if it may use one
    (a shard's points are dealt over every matrix's plan, so it plans after every clean run)."""
    target, name, script = pair
    key = plan_key(lab, target, script, model)
    kept = kept_plan(key) if kills.shard is None else None
    took = kept_durations(key) if kept is not None else {}
    return Matrix(name=f"{target.mode}/{name}", key=key, kept=kept, took=took)


_NO_CLEAN_RUN = CleanRun(
    status="waiting", answer=None, model_calls=0, step_runs=(), journal=(), invocation_id="",
    journaled_model_calls=0,
)  # fmt: skip
"""The clean run of a handler that could not complete (`SweepMatrix.not_swept` says why)."""


def _plan(run: SweepRun) -> list[CrashPoint]:
    """The crash points of a clean run, from what its target's trace shows (the host's step log, the wire)."""
    journal = run.journal()
    output = [e.appended_at for e in journal if e.type == "Command: Output"]
    ended = epoch(output[0]) if output else None
    return run.trace.points(run.invocation_id, journal, ended)


def _plan_so_far(run: SweepRun) -> list[CrashPoint] | None:
    """The points of a clean run still under way, as far as it went; None when none may start before it
    ended: its agent serves other services of the app (a point could call one no clean run registered
    yet), or it made a wait for an awakeable or a promise (which points hold its resolution back is known
    only once it came). Read while the agent writes its logs: a line it is still writing is not read yet."""
    if run.deployment is None or run.serves_others() or run.resolver.waits():
        return None
    return _plan(run)


def _tag(sweep_id: int, i: int, target: Target, script: str) -> str:
    """Names the i-th (target, script) of a sweep: its services, lanes and directories are its own, also
    when one sweep has several targets of one mode."""
    return f"s{sweep_id}_{i}_{target.mode}_{script}"


def sweep(
    what: TargetSpec | Target = TargetSpec(),
    *,
    answers: Answers = Answers(),
    model: ModelStub = ModelStub(),
    kills: KillPlan = KillPlan(),
    lab: Lab | None = None,
    cluster: int = 1,
    on_point: Callable[[PointResult], None] | None = None,
) -> list[SweepMatrix]:
    """Kill an agent at every moment of its run and measure what each replay paid again.

    `what` names the targets (`paidtwice.targets.TargetSpec`), or is one `Target` already built: by
    default the deck's agent in each of its modes; a user's app (every handler its discovery manifest
    lists, or those named) or a command's deployment in any language. Each is swept under each of
    `answers.variations`: the deck's agent under the stub's scripts of those names; the user's code under
    the script file's variations, answers made from each request (`auto`, the default, derived from
    `answers.seed`, written to `answers.write_script` if given), or a real model's answers recorded once
    (`answers.upstream` into `answers.record`). With `answers.every_tool`, each tool offered that no
    answer called is then reached by runs of its own, swept too (`_reach`).
    `model` sets the stub model's latency and price model; `kills` the restart delay, how many points run
    at once and the shard. A `lab` can be shared (it is not changed); otherwise one is started (a
    restate-server, or a cluster of `cluster` nodes, and a stub) and stopped before returning. `on_point`
    sees each point's result as soon as it is measured. Bad input raises a `UsageError` before anything
    starts.

    Example: `sweep(TargetSpec(app="agent:app", app_dir="examples/agent"), kills=KillPlan(parallel=4))`.
    """
    book = AutoBook()
    if isinstance(what, TargetSpec):
        user_code = what.user_code
        recording = answers.check(user_code=user_code)
        # The targets are checked (an app imported, a command asked what it serves) before a script is read.
        targets = what.build(seed=answers.seed)
    else:
        user_code = not what.deck_stub
        recording = answers.check(user_code=user_code)
        targets = [what]
    scripts = answers.scripts(user_code=user_code, book=book, recording=recording)
    model.check()
    kills.check()

    def run(on: Lab) -> list[SweepMatrix]:
        pairs: list[TargetScript] = [(t, name, s) for t in targets for name, s in scripts]
        started = time.time()
        matrices = sweep_pairs(on, pairs, kills=kills, model=model, on_point=on_point, started=started)
        if not answers.every_tool:
            return matrices

        def sweep_more(more: list[TargetScript]) -> list[SweepMatrix]:
            return sweep_pairs(
                on, more, kills=kills, model=model, on_point=on_point, reaching=True, started=started
            )

        swept = list(zip(pairs, matrices, strict=True))
        return matrices + reach_every_tool(
            sweep_more, swept, variations=answers.variations, seed=answers.seed
        )

    if lab is not None:
        matrices = run(lab)
    else:
        with Lab(price_model=model.price_model or DEFAULT_PRICE_MODEL, cluster=cluster) as own:
            matrices = run(own)
    answers.write(book, recording)
    return matrices


def record_answers(what: TargetSpec, *, upstream: str, record: Path, lab: Lab | None = None) -> int:
    """Run the handler `what` names once, its model calls answered by the real model behind `upstream`, and
    write the answers to `record` as a script file; the number of calls recorded. Nothing is swept."""
    answers = Answers(variations=("steady",), upstream=upstream, record=record)
    if not what.user_code:
        raise UsageError("record the answers of an app (--app) or a command (--cmd)")
    recording = answers.recording(user_code=True, auto=True)
    assert recording is not None
    targets = what.build(seed=answers.seed)

    def run(on: Lab) -> None:
        poller = Poller(lambda: on.sql, on.cancelled)
        try:
            tag = f"s{on.next_id()}_0_record_clean"
            clean_run(
                on,
                threading.Event(),
                poller,
                targets[0],
                recording,
                tag,
                ModelStub(price_model=on.price_model),
            )
        finally:
            poller.stop()

    if lab is not None:
        run(lab)
    else:
        with Lab(price_model=DEFAULT_PRICE_MODEL) as started:
            run(started)
    return recording.write(record)


def deck_scripts(names: Sequence[str]) -> list[tuple[str, Script]]:
    """The stub's named scripts, for the deck's agent."""
    return [(name, script_by_name(name)) for name in names]
