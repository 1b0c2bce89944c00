"""The sweep: "if the agent dies right now, what survives?", measured at every moment a crash can land.

A clean run of the agent gives its timeline: the host's step log (every model request, context operation and
step execution, in order) beside the journal. From it come the distinct crash points (`_timeline`; for a
command's deployment, from the wire: `_wire_timeline`): after each journal entry (before the agent's next
action), in flight inside each model call and each step, in flight inside calls made at once (parallel calls,
each held), and in each durable pause. Each point is a run of its own (`_sweep_runs`), concurrently on one
server and one stub: the agent is stopped at the moment (host gates, held stub calls, or the pause), the lab
confirms from the journal and the ledgers that it is there, SIGKILLs it, restarts it after the restart delay,
waits until the invocation completes or pauses, and counts what the replay paid again against the clean run.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from paidtwice._exceptions import UsageError
from paidtwice.agent._env import agent_env
from paidtwice.lab._approvals import Resolution
from paidtwice.lab._bill import DEFAULT_PRICE_MODEL, check_price_model
from paidtwice.lab._command import CommandAgent, check_command, command_label
from paidtwice.lab._discovery import AppHandler, choose_handlers, discover, needs_input
from paidtwice.lab._experiments import DEFAULT_RESTART_DELAY
from paidtwice.lab._inputs import made_input
from paidtwice.lab._runner import Lab
from paidtwice.lab._sweep_runs import SweepRun, SweepTarget, clean_run, deck_target, node_path, point_run
from paidtwice.lab._timeline import derive_points
from paidtwice.lab._watch import Watcher
from paidtwice.lab._wire_timeline import wire_points
from paidtwice.results import CleanRun, CrashPoint, PointResult, SweepMatrix
from paidtwice.stub._auto import AUTO, DEFAULT_SEED, AutoBook, auto_script, script_for
from paidtwice.stub._record import RecordingScript, recording_script
from paidtwice.stub._scripts import Script, script_by_name
from paidtwice.stub._turns import VARIATIONS, state_entries

__all__ = [
    "CrashPoint",
    "PointResult",
    "SweepMatrix",
    "SweepTarget",
    "check_app",
    "deck_scripts",
    "deck_target",
    "shard_of",
    "sweep",
    "sweep_targets",
]

_T = TypeVar("_T")
_R = TypeVar("_R")

_Combo = tuple[SweepTarget, str, Script]
"""One matrix of a sweep: the target, the script's name, the script."""


def sweep_targets(
    lab: Lab,
    *,
    targets: Sequence[SweepTarget],
    scripts: Sequence[tuple[str, Script]],
    restart_delay: float = DEFAULT_RESTART_DELAY,
    parallel: int = 16,
    on_point: Callable[[PointResult], None] | None = None,
    model_latency: float = 0.0,
    shard: Shard | None = None,
) -> list[SweepMatrix]:
    """Sweep every target under every script; one matrix per (target, script), points in time order.
    With a `shard` (K, N), only the K-th of N shares of the crash points (every clean run is made, for
    the points come from it); the N shards' points together are the whole sweep's.

    Clean runs go first (concurrently); then every crash point of every matrix, `parallel` at a time, each
    on an agent, lane and invocation of its own. `on_point` sees each result as soon as it is measured.
    """
    watcher = Watcher(lambda: lab.sql, lab.cancelled)
    lock = threading.Lock()
    started = time.time()
    stop = threading.Event()
    # Service names, lanes and work directories are the sweep's own, also when a lab sweeps more than once.
    sweep_id = lab.next_id()
    try:
        combos: list[_Combo] = [(t, name, s) for t in targets for name, s in scripts]

        def clean(job: tuple[int, _Combo]) -> tuple[CleanRun, SweepRun]:
            i, (target, name, script) = job
            tag = f"{_tag(sweep_id, i, target, name)}_clean"
            return clean_run(lab, stop, watcher, target, script, tag, model_latency)

        cleans = _all_or_stop(clean, list(enumerate(combos)), parallel=parallel, stop=stop)
        jobs = [(i, point) for i, (record, run) in enumerate(cleans) for point in _plan(record, run)]
        if shard is not None:
            jobs = shard_of(jobs, shard)

        def one(job: tuple[int, CrashPoint]) -> PointResult:
            i, point = job
            target, name, script = combos[i]
            result = point_run(
                lab,
                stop,
                watcher,
                target,
                script,
                name,
                cleans[i][0],
                point,
                tag=f"{_tag(sweep_id, i, target, name)}_{point.order}",
                restart_delay=restart_delay,
                model_latency=model_latency,
            )
            if on_point is not None:
                with lock:
                    on_point(result)
            return result

        results = _all_or_stop(one, jobs, parallel=parallel, stop=stop)
    finally:
        watcher.stop()
    wall = round(time.time() - started, 3)
    matrices = []
    for i, (target, name, _) in enumerate(combos):
        points = tuple(r for (j, _), r in zip(jobs, results, strict=True) if j == i)
        matrices.append(SweepMatrix(target.mode, name, cleans[i][0], points, wall))
    return matrices


Shard = tuple[int, int]
"""(K, N): the K-th (from 1) of N shares of a sweep's crash points."""


def shard_of(jobs: Sequence[_T], shard: Shard) -> list[_T]:
    """The K-th of N shares of `jobs`, dealt in turn (job n goes to shard n mod N + 1), so each shard gets
    points of every handler and every moment, and the shares cover the jobs once."""
    k, n = shard
    if not 1 <= k <= n:
        raise UsageError(f"no shard {k}/{n}: K is from 1 to N")
    return [job for i, job in enumerate(jobs) if i % n == k - 1]


def _all_or_stop(
    work: Callable[[_T], _R], jobs: Sequence[_T], *, parallel: int, stop: threading.Event
) -> list[_R]:
    """`work` on every job, `parallel` at a time, results in the jobs' order. When one fails, `stop` tells
    the others to stop waiting (their agents are killed on the way out) and the failure is raised."""
    with ThreadPoolExecutor(max_workers=max(1, min(parallel, len(jobs)))) as pool:
        futures = [pool.submit(work, job) for job in jobs]
        try:
            return [f.result() for f in futures]
        except BaseException:
            stop.set()
            raise


def _plan(clean: CleanRun, run: SweepRun) -> list[CrashPoint]:
    """The crash points of a clean run: from the host's step log, or for a command, from the wire."""
    if isinstance(run.agent, CommandAgent):
        return wire_points(
            journal=run.journal(),
            wire_log=run.agent.wire_log,
            invocation_id=run.invocation_id,
            steps=run.agent.steps(run.invocation_id),
            calls=run.lane.model_calls(run.invocation_id),
            tools=run.lane.tool_runs(run.invocation_id),
        )
    return derive_points(run.events(), clean.journal, run.tool_starts(), ended=run.output_at())


def _tag(sweep_id: int, i: int, target: SweepTarget, script: str) -> str:
    """Names the i-th (target, script) of a sweep: its services, lanes and directories are its own, also
    when one sweep has several targets of one mode."""
    return f"s{sweep_id}_{i}_{target.mode}_{script}"


def sweep(
    *,
    app: str | None = None,
    service: str | None = None,
    handler: str | None = None,
    handlers: Sequence[str] = (),
    input: Any = None,
    script: str | Path | None = None,
    modes: Sequence[str] = ("naive", "journaled"),
    scripts: Sequence[str] = VARIATIONS,
    app_dir: str | Path | None = None,
    restart_delay: float = DEFAULT_RESTART_DELAY,
    parallel: int = 16,
    lab: Lab | None = None,
    on_point: Callable[[PointResult], None] | None = None,
    model_latency: float = 0.0,
    price_model: str | None = None,
    cluster: int = 1,
    command: str | None = None,
    port_env: str = "PORT",
    key: str | None = None,
    shard: Shard | None = None,
    seed: int = DEFAULT_SEED,
    write_script: Path | None = None,
    upstream: str | None = None,
    record: Path | None = None,
    state: Mapping[str, Any] | None = None,
    resolution: Resolution | None = None,
) -> list[SweepMatrix]:
    """Kill an agent at every moment of its run and measure what each replay paid again.

    Without `app`, the deck's agent is swept in each of `modes` under each of the stub's `scripts`. With
    `app` ("MODULE:APP", that app object as given, or "MODULE", every service the module defines;
    importable from `app_dir`), the user's own handlers are swept: `service`/`handler`, or those `handlers`
    names (SERVICE/HANDLER, or SERVICE for all its handlers), or without either every handler the app's
    discovery manifest lists; each called with `input`, its model answers read from the `script` file in
    each variation named by `scripts`. A `lab`
    can be shared; otherwise one is started (a restate-server, or a cluster of `cluster` nodes, and a stub)
    and stopped before returning. With `command` (a shell command serving a Restate deployment in any
    language, run in `app_dir`, told its port in `port_env`) instead of `app`, that deployment is swept
    through a protocol proxy. A keyed service (Virtual Object, Workflow) is called with `key` (by default
    `DEFAULT_KEY`), its state set to `state` (names and JSON values; by default the script file's `[state]`
    table, if any) before the clean run and every point. `model_latency` makes the stub's model take that
    many seconds per answer; `price_model` prices the calls (a shared lab's own price model otherwise).
    `shard` (K, N) runs the K-th of N shares of the crash points. Bad input raises a `UsageError` before
    anything starts.

    An app or a command without a `script` (or with `script="auto"`) gets answers made from each request
    (`paidtwice.stub._auto`), derived from `seed`; `write_script` then names the file they are written to,
    in the script-file format, once the sweep is done. With `upstream` and `record`, the model's answers
    come from a real model behind `upstream` (each call once, the key from the usual environment variable)
    and are written to `record` as a script file that later sweeps replay offline.
    A handler given no `input` whose input schema needs one gets a value made from its schema
    (`paidtwice.lab._inputs`), derived from `seed`.

    The awakeables and Workflow promises a handler waits for are answered as `resolution` says (by default,
    half a second after the handler waits, with the script's `[[awakeable]]` values or one valid against
    their type: `paidtwice.lab._approvals`).
    """
    unknown = [name for name in scripts if name not in VARIATIONS]
    if unknown or not scripts:
        raise UsageError(f"unknown script {', '.join(unknown) or '(none)'} (known: {', '.join(VARIATIONS)})")
    book = AutoBook()
    users = app is not None or command is not None
    auto = users and (script is None or str(script) == AUTO)
    if write_script is not None and not auto:
        raise UsageError("--write-script writes auto answers: it goes with --app or --cmd and no script file")
    recording = _recording(upstream, record, own=users, auto=auto, scripts=scripts)

    def answers(name: str) -> Script:
        if recording is not None:
            return recording
        return script_for(script, name, seed=seed, book=book)

    if command is not None:
        targets, named = _command_targets(
            command, service, handler, input, answers, scripts, app_dir, port_env
        )
    elif app is None:
        targets, named = _deck_targets(modes, scripts)
    else:
        if handler and not service:
            raise UsageError("a handler is named with its service: SERVICE/HANDLER, or service and handler")
        wanted = [*handlers, *([f"{service}/{handler or ''}".rstrip("/")] if service else [])]
        targets, named = _app_targets(app, wanted, input, answers, scripts, app_dir, seed)
    if model_latency < 0:
        raise UsageError(f"a model latency cannot be negative ({model_latency:g})")
    if key is not None:
        targets = [dataclasses.replace(target, key=key) for target in targets]
    if state is not None:
        entries = state_entries(state, "the state")
        targets = [dataclasses.replace(target, state=entries) for target in targets]
    if resolution is not None:
        targets = [dataclasses.replace(target, resolution=resolution) for target in targets]

    def run(on: Lab) -> list[SweepMatrix]:
        return sweep_targets(
            on,
            targets=targets,
            scripts=named,
            restart_delay=restart_delay,
            parallel=parallel,
            on_point=on_point,
            model_latency=model_latency,
            shard=shard,
        )

    if lab is not None:
        if price_model is not None:
            lab.price_model = check_price_model(price_model)
        matrices = run(lab)
    else:
        with Lab(price_model=price_model or DEFAULT_PRICE_MODEL, cluster=cluster) as own:
            matrices = run(own)
    if write_script is not None:
        auto_script("steady", seed=seed, book=book).write(write_script)
    if recording is not None and record is not None:
        recording.write(record)
    return matrices


def _recording(
    upstream: str | None, record: Path | None, *, own: bool, auto: bool, scripts: Sequence[str]
) -> RecordingScript | None:
    """The recording script of a sweep that records (`upstream` and `record` given); None otherwise."""
    if upstream is None and record is None:
        return None
    if upstream is None or record is None:
        raise UsageError("recording needs both the file (--record FILE) and the model (--upstream URL)")
    if not own or not auto:
        raise UsageError("recording answers goes with --app or --cmd and no --script")
    if list(scripts) != ["steady"]:
        raise UsageError("a recording answers each call as the model did: sweep it with --variation steady")
    if not upstream.startswith(("http://", "https://")):
        raise UsageError(f"--upstream {upstream!r} is not an http(s) URL")
    return recording_script(upstream)


def record_answers(
    *,
    app: str | None = None,
    command: str | None = None,
    service: str,
    handler: str,
    input: Any = None,
    upstream: str,
    record: Path,
    app_dir: str | Path | None = None,
    port_env: str = "PORT",
    key: str | None = None,
    lab: Lab | None = None,
) -> int:
    """Run the handler once, its model calls answered by the real model behind `upstream`, and write the
    answers to `record` as a script file; the number of calls recorded. Nothing is swept."""
    recording = _recording(upstream, record, own=True, auto=True, scripts=["steady"])
    assert recording is not None
    if command is not None:
        targets, _ = _command_targets(
            command, service, handler, input, lambda name: recording, ["steady"], app_dir, port_env
        )
    elif app is not None:
        targets, _ = _app_targets(
            app, [f"{service}/{handler}"], input, lambda name: recording, ["steady"], app_dir, DEFAULT_SEED
        )
    else:
        raise UsageError("record the answers of an app (--app) or a command (--cmd)")
    if key is not None:
        targets = [dataclasses.replace(target, key=key) for target in targets]

    def run(on: Lab) -> None:
        watcher = Watcher(lambda: on.sql, on.cancelled)
        try:
            clean_run(
                on, threading.Event(), watcher, targets[0], recording, f"s{on.next_id()}_0_record_clean"
            )
        finally:
            watcher.stop()

    if lab is not None:
        run(lab)
    else:
        with Lab(price_model=DEFAULT_PRICE_MODEL) as started:
            run(started)
    return recording.write(record)


_Targets = tuple[list[SweepTarget], list[tuple[str, Script]]]
"""What a sweep runs: its targets, and the scripts (name, script) each is swept under."""


def _command_targets(
    command: str,
    service: str | None,
    handler: str | None,
    input: Any,
    answers: Callable[[str], Script],
    scripts: Sequence[str],
    app_dir: str | Path | None,
    port_env: str,
) -> _Targets:
    """A command's deployment, once it is seen to serve `service`/`handler`."""
    if not service or not handler:
        raise UsageError("sweeping a command needs its service and its handler")
    where = Path(app_dir or ".").resolve()
    if not where.is_dir():
        raise UsageError(f"no directory {where}")
    named: list[tuple[str, Script]] = [(name, answers(name)) for name in scripts]
    check_dir = Path(tempfile.mkdtemp(prefix="paidtwice-check-"))
    check_env = {**os.environ, **_command_env_for_check()}
    check_command(command, service, handler, env=check_env, workdir=check_dir, port_env=port_env, cwd=where)
    shutil.rmtree(check_dir, ignore_errors=True)  # kept only when the error names the log in it
    targets = [
        SweepTarget(
            "",
            service,
            handler,
            input,
            mode=command_label(service, command),
            cwd=str(where),
            command=command,
            port_env=port_env,
        )
    ]
    return targets, named


def _deck_targets(modes: Sequence[str], scripts: Sequence[str]) -> _Targets:
    """The deck's agent in each mode, under the stub's named scripts."""
    bad = [m for m in modes if m not in ("naive", "journaled")]
    if bad or not modes:
        raise UsageError(f"unknown mode {', '.join(bad) or '(none)'} (known: naive, journaled)")
    return [deck_target(mode) for mode in modes], deck_scripts(scripts)


def _app_targets(
    app: str,
    handlers: Sequence[str],
    input: Any,
    answers: Callable[[str], Script],
    scripts: Sequence[str],
    app_dir: str | Path | None,
    seed: int,
) -> _Targets:
    """A user's app served by paidtwice's host: the `handlers` named (SERVICE/HANDLER or SERVICE), or every
    handler its discovery manifest lists, once the app is seen to import and to serve them."""
    cwd = str(Path(app_dir or ".").resolve())
    if not Path(cwd).is_dir():
        raise UsageError(f"no directory {app_dir} to import {app} from")
    chosen, left_out = choose_handlers(discover(app, cwd=cwd), handlers, app=app)
    for handler in left_out:
        _note(
            f"not swept: {handler.name}, a Workflow's shared handler, works beside the workflow's run "
            f"(name it to sweep it alone: --handler {handler.name})"
        )
    # Named by what is swept: two handlers of one app (a journaled and a naive form) are two matrices, two
    # heatmaps, never "app" twice.
    targets = [
        SweepTarget(app, h.service, h.handler, _input(h, input, seed), mode=h.name, cwd=cwd) for h in chosen
    ]
    return targets, [(name, answers(name)) for name in scripts]


def _input(handler: AppHandler, given: Any, seed: int) -> Any:
    """The input `handler` is called with: the one given, else (when its schema needs one) a value made
    from its input schema (each point's record and the summary say which)."""
    if given is not None or not needs_input(handler.input_schema):
        return given
    return made_input(handler.input_schema, handler=handler.name, seed=seed)


def _note(line: str) -> None:
    print(f"paidtwice: {line}", file=sys.stderr)


def _command_env_for_check() -> dict[str, str]:
    """A command's environment while it is only asked what it serves: no stub runs yet, nothing is sent."""
    return {
        **agent_env(openai_url="http://127.0.0.1:9/v1", anthropic_url="http://127.0.0.1:9"),
        **node_path(),
    }


def check_app(app: str, service: str, handler: str, *, cwd: str) -> str | None:
    """Why the app cannot be swept (not importable, no such service or handler); None if it can."""
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice.agent.host", app, "--check", f"{service}/{handler}"],
        capture_output=True,
        text=True,
        cwd=cwd,
        # As in the sweep: the model's client is pointed at the stub (not started yet, nothing is sent).
        env=agent_env(openai_url="http://127.0.0.1:9/v1", anthropic_url="http://127.0.0.1:9"),
        timeout=120,
    )
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return lines[-1].removeprefix("paidtwice: ") if lines else f"{app} cannot be loaded"


def deck_scripts(names: Sequence[str]) -> list[tuple[str, Script]]:
    """The stub's named scripts, for the deck's agent."""
    return [(name, script_by_name(name)) for name in names]
