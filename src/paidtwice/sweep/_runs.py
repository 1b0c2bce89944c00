"""The sweep's runs: the clean run of a target, and one run per crash point, each on an agent of its own.

A point's run stops the agent at its moment (host gates, held stub calls, a held frame, or the pause),
confirms from the journal and the ledgers that it is there, SIGKILLs it, restarts it after the restart delay,
waits until the invocation completes or pauses, and counts what the replay paid again against the clean run.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from paidtwice._exceptions import ExperimentError, LabCancelled, ScriptFileError, UsageError
from paidtwice.agent import GATE, MISMATCH_ERROR_CODE, AgentAttempt, agent_env
from paidtwice.engine import Deployment, InvocationRow, JournalEntry, Refused, epoch
from paidtwice.lab import (
    PRICES_AS_OF,
    AttemptWatch,
    Lab,
    Watcher,
    attempt_log_of,
    bill,
    extra_calls,
    mismatches_of,
    model_log_of,
    renamed_service,
    settled,
    tool_log_of,
    wait_for,
)
from paidtwice.results import CleanRun, CrashPoint, PointResult
from paidtwice.stub import Hold, Lane, Script
from paidtwice.sweep._approvals import Resolver, lane_idle
from paidtwice.sweep._callees import CalleeWatch, Companions, failure_of, unserved_call
from paidtwice.sweep._coverage import coverage_of
from paidtwice.sweep._not_swept import NO_MODEL_CALL, NotSwept, WaitsOnNothing, before_first_call
from paidtwice.sweep._options import KillPlan, ModelStub
from paidtwice.sweep._paid import answered_differently, calls_at_kill, undecided_why, why_not_placed
from paidtwice.targets import Launch, Target

__all__ = ["NO_MODEL_CALL", "NotSwept", "SweepRun", "clean_run", "point_run"]

_HOLD_SECONDS = 60.0
"""A held call stays open this long; the kill ends it much sooner (the stub sees the caller leave)."""
_MOMENT_TIMEOUT = 60.0
_JOURNAL_STILL = 15.0  # stopped there, the journal short and still this long: kill, the point says not placed
_SETTLE_TIMEOUT = 180.0
_FAILED_ATTEMPTS = 5
"""A clean run whose handler failed this many attempts is broken, not slow: the sweep stops and says why."""

DEFAULT_KEY = "paidtwice"
"""The key a keyed service (Virtual Object, Workflow) is called with when the target names none."""


# -- runs ---------------------------------------------------------------------------------------------


class SweepRun:
    """One invocation of the target on an agent of its own, on the lab's server and a lane of its own."""

    def __init__(
        self,
        lab: Lab,
        target: Target,
        script: Script,
        *,
        tag: str,
        gate: str | None,
        model: ModelStub = ModelStub(),
        hold: int | None = None,
        hold_at: int | None = None,
        hold_op: int | None = None,
        alone: bool = False,
    ) -> None:
        self.lab = lab
        self.target = target
        self.state = target.state if target.state is not None else script.state
        safe = re.sub(r"[^A-Za-z0-9]", "_", tag)
        self.service = renamed_service(target.service, tag)
        self.lane: Lane = lab.stub.open_lane(script, name=f"sweep-{safe.lower()}")
        self.lane.latency = model.latency
        self.price_model = model.price_model or lab.price_model
        """What the run's calls are priced as."""
        workdir = lab.workdir / "sweep" / safe
        workdir.mkdir(parents=True, exist_ok=True)
        self.step_log = workdir / "steps.jsonl"
        env = agent_env(
            given=dict(target.env),
            openai_url=self.lane.base_url,
            anthropic_url=self.lane.anthropic_base_url,
            gemini_url=self.lane.gemini_base_url,
            tools_url=self.lane.tools_url,
            step_log=str(self.step_log),
            gate=gate or "",
        )
        launch = Launch(
            env,
            workdir,
            self.service,
            self.step_log,
            self.lane,
            lab.forkserver,
            hold,
            alone,
            preloading=lambda modules, cwd: lab.forkserver_for(modules, env=env, cwd=cwd),
        )
        self.agent, self.trace = target.launch(launch)
        self.invocation_id = ""
        self.deployment: Deployment | None = None
        """The agent's registration, once `start` made it."""
        self.cannot_settle: str | None = None
        """Why the run's replay cannot settle, once the sweep saw it could not (`CalleeWatch`)."""
        self.resolver = Resolver(
            lab.ingress,
            self.step_log,
            service=target.service,
            served_as=self.service,
            resolution=target.resolution,
            script_values=script.awakeables,
            hold_at=hold_at,
            hold_op=hold_op,
            journal_length=lambda: len(self.journal()),
            idle=lambda: lane_idle(self.lane),
        )

    def start(self, *, replacement: bool = False) -> str:
        if replacement:
            # The replacement (without the gate) loads beside the process to serve, before the invocation is
            # sent: the kill then follows the moment at once (a tenth of a second of loading would move it).
            self.agent.prepare()
            self.agent.env[GATE] = ""
            self.agent.prepare(ahead=2)
        self.agent.start()
        if replacement:
            self.agent.wait_ready()
        deployment = self.deployment = self.lab.admin.register_deployment(self.agent.uri)
        key = self.target.key
        if key is None and self.service in deployment.keyed:
            key = DEFAULT_KEY
        elif key is not None and self.service not in deployment.keyed:
            raise UsageError(
                f"--key {key!r} given, but {self.target.service} is a plain Service, called without a key "
                "(only a Virtual Object's or a Workflow's handler takes one): leave --key out"
            )
        if self.state:
            if key is None:
                raise UsageError(
                    f"a state is given, but {self.target.service} is a plain Service, which has none (only a "
                    "Virtual Object or a Workflow keeps state): leave --state (or the script's [state]) out"
                )
            self._seed_state(key)
        self.invocation_id = self.lab.ingress.send(
            self.service, self.target.handler, self.target.input, key=key, content_type=self.target.input_type
        )
        self.resolver.key = key
        self.resolver.start(self.invocation_id)
        return self.invocation_id

    def _seed_state(self, key: str) -> None:
        """Give the object its state, and wait until the server has applied it (the admin API applies it
        asynchronously) so that the invocation sent next reads it."""
        wanted = dict(self.state)
        self.lab.admin.set_state(self.service, key, {name: value.encode() for name, value in wanted.items()})

        def applied() -> bool:
            held = self.lab.sql.state(self.service, key)
            return all(name in held and json.loads(held[name]) == json.loads(v) for name, v in wanted.items())

        what = f"the state of {self.target.service}/{key} to be set"
        wait_for(what, applied, timeout=30.0, stop=lambda: False)

    def serves_others(self) -> bool:
        """The agent registered services of the app besides the run's own (services its handler may call)."""
        return self.deployment is not None and bool(self.deployment.services - {self.service})

    def journal(self) -> list[JournalEntry]:
        return self.lab.sql.journal(self.invocation_id)

    def output_at(self) -> float | None:
        """When the server appended the invocation's output (wall clock); None before it did."""
        output = [e.appended_at for e in self.journal() if e.type == "Command: Output"]
        return epoch(output[0]) if output else None

    def steps(self) -> tuple[tuple[str, int], ...]:
        return self.trace.steps(self.invocation_id)

    def answer(self, status: str) -> str | None:
        if status != "completed":
            return None
        return self.lab.ingress.output(self.invocation_id)


def _wait(
    lab: Lab, stop: threading.Event, what: str, condition: Callable[[], bool], *, timeout: float
) -> None:
    """Poll `condition`; `stop` is the sweep's own: set when one point failed, so the others stop waiting
    (the lab, which may be shared, lives on)."""
    wait_for(what, condition, timeout=timeout, stop=lambda: lab.cancelled.is_set() or stop.is_set())


def _unanswered(lane: Lane) -> tuple[str, ...]:
    """Why each model call on the lane (one invocation's) that no turn of the script answers was not
    answered."""
    return tuple(f"{c.answer.text} (model call {c.call})" for c in lane.model_calls() if c.unanswered)


def _stuck(attempts: Sequence[AgentAttempt], after: int | None) -> bool:
    """The last `after` attempts that reached the agent all failed with a journal mismatch."""
    if after is None:
        return False
    tail = [a.error_code for a in attempts[-after:]]
    return len(tail) == after and all(code == MISMATCH_ERROR_CODE for code in tail)


# -- the clean run --------------------------------------------------------------------------------------


def clean_run(
    lab: Lab,
    stop: threading.Event,
    watcher: Watcher,
    target: Target,
    script: Script,
    tag: str,
    model: ModelStub = ModelStub(),
    companions: Companions | None = None,
) -> tuple[CleanRun, SweepRun]:
    """Run the target once without a crash; the run's record, and the run (its logs plan the points).
    Its agent is closed on return, or kept by `companions` if it serves other services of the app."""
    run = SweepRun(lab, target, script, tag=tag, gate=None, model=model)
    try:
        return _clean(lab, stop, watcher, run), run
    finally:
        if companions is not None and run.deployment is not None and run.serves_others():
            others = run.deployment.services - {run.service}
            companions.keep(run.agent, registered=run.deployment.registered, services=others)
        else:
            run.agent.close()


def _clean(lab: Lab, stop: threading.Event, watcher: Watcher, run: SweepRun) -> CleanRun:
    target = run.target
    try:
        run.start()
    except Refused as err:
        raise NotSwept(f"the clean run of {target.service}/{target.handler} was not sent: {err}") from None
    watch = watcher.watch(run.invocation_id)
    try:
        _settle_clean(lab, stop, run, watch)
    finally:
        run.resolver.stop()
        watcher.forget(run.invocation_id)
    status = _check_clean(lab, run, target, watch)
    calls = run.lane.model_calls()
    paid = bill(calls, run.price_model)
    in_steps = run.trace.calls_in_steps(run.invocation_id)
    missed = run.trace.unfollowed(run.invocation_id, run.journal())
    sys.stderr.write("".join(f"paidtwice: {target.mode}: could not follow the call to {u}\n" for u in missed))
    return CleanRun(
        status=status,
        answer=run.answer(status),
        model_calls=len(calls),
        usage=paid.usage,
        cost_usd=paid.cost_usd,
        step_runs=run.steps(),
        journal=tuple(e.label() for e in run.journal()),
        invocation_id=run.invocation_id,
        journaled_model_calls=len(in_steps),
        model_turns=tuple(c.turn for c in calls),
        answers=tuple((c.turn, c.asked, c.answer.summary()) for c in calls),
        calls_in_steps=in_steps,
        calls_undecided=run.trace.calls_undecided(run.invocation_id),
        model_callers=tuple(c.by for c in calls) if any(c.by for c in calls) else (),
        unfollowed=missed,
        explicit_recovery=run.trace.explicit_recovery(f"{run.service}/{target.handler}"),
    )


def _settle_clean(lab: Lab, stop: threading.Event, run: SweepRun, watch: AttemptWatch) -> None:
    """Wait until the clean run completes or pauses, a call goes unanswered, or it fails before any model
    call."""
    name = f"{run.target.service}/{run.target.handler}"

    def failed_attempts() -> int:
        return sum(1 for a in run.agent.attempts(run.invocation_id) if a.last_event == "error")

    def failing() -> bool:
        """An error before any model call (a client that does not reach the stub), another error attempt after
        attempt, or a call to a handler nothing serves: each would retry for good."""
        failed = failed_attempts()
        unserved = unserved_call(watch.last, name) is not None
        return failed >= _FAILED_ATTEMPTS or (failed > 0 and not run.lane.model_calls()) or unserved

    waiting: list[str] = []

    def waits_on_nothing() -> bool:
        """It sits on an awakeable or a promise nothing will resolve: waiting longer would change nothing."""
        if not run.lane.model_calls() and not run.resolver.waits():
            return False
        why = run.resolver.waiting_on_nothing()
        if why is not None:
            waiting.append(why)
        return why is not None

    try:
        _wait(
            lab,
            stop,
            f"clean run {run.invocation_id} to settle",
            lambda: (
                _tree_settled(run, watch) or bool(_unanswered(run.lane)) or failing() or waits_on_nothing()
            ),
            timeout=_SETTLE_TIMEOUT,
        )
    except ExperimentError:
        row = lab.sql.invocation(run.invocation_id)
        journal = run.journal()
        last = f"after entry {len(journal) - 1} ({journal[-1].label()})" if journal else "with no entry"
        status = row.status if row is not None else "unknown"
        lab.admin.kill(run.invocation_id)
        raise UsageError(
            f"the clean run of {name} did not finish within {_SETTLE_TIMEOUT:.0f}s: it is {status} {last}"
            f"{failure_of(row)}; a sweep needs a handler that finishes on its own or once the sweep "
            "resolved what it waits for (awakeables, Workflow promises; not a service the app does not serve)"
        ) from None
    if (unserved := unserved_call(watch.last, name)) is not None and not settled(watch.last):
        lab.admin.kill(run.invocation_id)
        raise UsageError(unserved)
    if waiting and not settled(watch.last):
        lab.admin.kill(run.invocation_id)
        raise WaitsOnNothing(f"the clean run of {name} waits for {waiting[0]}")
    if run.lane.model_calls() and failed_attempts() >= _FAILED_ATTEMPTS and not settled(watch.last):
        row = lab.sql.invocation(run.invocation_id)
        lab.admin.kill(run.invocation_id)
        raise UsageError(
            f"the clean run of {name} fails: {failed_attempts()} attempts ended in an error"
            f"{failure_of(row)}; a sweep needs a handler that completes without a crash"
        )


def _tree_settled(run: SweepRun, watch: AttemptWatch) -> bool:
    """The invocation settled, and what it sent to other handlers completed (a send's may run on after)."""
    if not settled(watch.last):
        return False
    sent = any(e.type == "Command: OneWayCall" for e in run.journal())
    return not sent or not run.lab.sql.callees_open(run.invocation_id)


def _check_clean(lab: Lab, run: SweepRun, target: Target, watch: AttemptWatch) -> str:
    """The clean run's status (completed), once it is one the points can be compared with: it called the
    model through the stub, the host saw every call, and the script answered each; raise otherwise."""
    row = lab.sql.invocation(run.invocation_id)
    status = row.status if row else "unknown"
    name = f"{target.service}/{target.handler}"
    ended = None if run.lane.model_calls() else before_first_call(name, target.input, row, [])
    if ended is not None:
        if not settled(watch.last):
            lab.admin.kill(run.invocation_id)
        raise before_first_call(name, target.input, row, lab.sql.failures(run.invocation_id)) or ended
    counted = len(run.lane.model_calls())
    seen = run.trace.model_calls_seen(run.invocation_id)
    # A trace that cannot see the requests (the wire's) has its points from the stub and the wire.
    if seen is not None and seen != counted:
        # Crash points come from what the host saw: a call it missed would be a moment never swept.
        missed = run.trace.unfollowed(run.invocation_id, run.journal())
        if missed and counted > seen:
            raise UsageError(
                f"the stub counted {counted} model calls of {target.service}/{target.handler}, "
                f"{counted - seen} of them outside its invocation tree: could not follow the call to "
                f"{missed[0]}"
            )
        raise UsageError(
            f"the stub counted {counted} model calls of {target.service}/{target.handler} but its "
            f"handler was seen making {seen}: it calls the model through an HTTP client paidtwice does "
            "not follow (httpx, aiohttp, http.client and the clients on them), or outside the handler"
        )
    unanswered = [c for c in run.lane.model_calls() if c.unanswered]
    if unanswered:
        # Nothing to compare the points with: the script does not say what the model answers.
        if status not in ("completed", "paused"):
            lab.admin.kill(run.invocation_id)
        where = f"model call {unanswered[0].call} of the clean run of {target.service}/{target.handler}"
        raise ScriptFileError(f"{unanswered[0].answer.text} ({where})")
    if status != "completed":
        raise ExperimentError(f"the clean run of {target.service}/{target.handler} ended {status}")
    return status


# -- a crash point --------------------------------------------------------------------------------------


def point_run(
    lab: Lab,
    stop: threading.Event,
    watcher: Watcher,
    target: Target,
    script: Script,
    script_name: str,
    clean: CleanRun,
    point: CrashPoint,
    *,
    tag: str,
    kills: KillPlan = KillPlan(),
    model: ModelStub = ModelStub(),
    against: Callable[[], tuple[CleanRun, CrashPoint]] | None = None,
) -> PointResult:
    """Run the target to the point's moment, kill it there, restart it and measure what the replay paid.
    With `against`, the run is measured against what it returns once the run settled (the clean run and the
    point as the clean run planned it: a point started from a kept plan, beside its clean run), not against
    `clean` and `point`."""
    started = time.time()
    run = SweepRun(
        lab,
        target,
        _holding(script, point),
        tag=tag,
        gate=point.gate,
        model=model,
        hold=point.hold_entries,
        hold_at=point.journal_entries,
        hold_op=point.pause_op if point.kind == "waiting" else None,
        alone=True,
    )
    with run.agent:
        invocation_id = run.start(replacement=True)
        watch = watcher.watch(invocation_id)
        try:
            _wait_for_moment(lab, stop, run, point)
            kill_at, up_at = _kill_and_restart(lab, stop, run, kills.restart_delay)
            run.resolver.release()  # the approval comes once the agent is back, as it would after a crash
            callees = CalleeWatch(
                lambda: lab.sql.callees(invocation_id),
                own=run.agent.uri,
                calls="Command: Call" in clean.journal,
            )
            try:
                _wait(
                    lab,
                    stop,
                    f"{invocation_id} to settle",
                    lambda: _point_settled(run, watch, callees, kill_at),
                    timeout=_SETTLE_TIMEOUT,
                )
            except ExperimentError:
                # No verdict on it, and no reason to stop the other points: said, with where it sat.
                row = lab.sql.invocation(invocation_id)
                status = row.status if row is not None else "unknown"
                run.cannot_settle = (
                    f"it did not complete or pause within {_SETTLE_TIMEOUT:.0f}s after the restart "
                    f"(it is {status}{failure_of(row)})"
                )
        finally:
            run.resolver.stop()
            watcher.forget(invocation_id)
        # What the server and the agent say is read before any wait: a replay the sweep stops (stuck,
        # unanswered) is stopped as soon as it settled, whatever the point is measured against.
        seen = _observe(lab, run, watch, kill_at)
        waited = time.time()
        if against is not None:
            clean, point = against()
        kill = _Kill(started=started, at=kill_at, up_at=up_at, waited=time.time() - waited)
        return _point_result(run, script_name, clean, point, kill, seen)


def _holding(script: Script, point: CrashPoint) -> Script:
    """The script with the point's model calls and tool call held open at the stub."""
    if point.model_holds:
        first, *more = (Hold(call, _HOLD_SECONDS) for call in point.model_holds)
        script = dataclasses.replace(script, hold=first, more_holds=tuple(more))
    if point.tool_hold is not None:
        script = dataclasses.replace(script, tool_hold=Hold(point.tool_hold, _HOLD_SECONDS))
    return script


def _stopped_there(run: SweepRun, point: CrashPoint) -> bool:
    """Is the agent at the moment? Cheap checks only: the step log and the stub's ledgers. Every branch
    stopped: each gate logged, each held call in flight."""
    if not run.trace.stopped_at(run.invocation_id, point):
        return False
    if point.model_holds:
        calls = run.lane.model_calls()
        if not all(len(calls) >= n and calls[n - 1].finished is None for n in point.model_holds):
            return False
    if point.tool_hold is not None:
        tools = run.lane.tool_runs()
        n = point.tool_hold
        return len(tools) >= n and tools[n - 1].finished is None
    return True


def _wait_for_moment(lab: Lab, stop: threading.Event, run: SweepRun, point: CrashPoint) -> None:
    """Wait until the agent is stopped at the moment and the journal (read only then) holds its entries."""
    seen: list[tuple[int, float]] = []  # (journal length, since when), while stopped there

    def at_moment() -> bool:
        if not _stopped_there(run, point):
            seen.clear()
            return False
        entries = len(run.journal())
        if not seen or seen[0][0] != entries:
            seen[:] = [(entries, time.monotonic())]
        return entries >= point.journal_entries or time.monotonic() - seen[0][1] >= _JOURNAL_STILL

    try:
        _wait(lab, stop, f"{point.name} ({run.invocation_id})", at_moment, timeout=_MOMENT_TIMEOUT)
    except ExperimentError as err:
        # Say what was missing: the stop (gate, hold, held call) or the journal's entries.
        made = [(c.call, c.finished is None) for c in run.lane.model_calls(run.invocation_id)]
        raise ExperimentError(
            f"{err}: stopped there {_stopped_there(run, point)}, journal {len(run.journal())} of "
            f"{point.journal_entries} entries, model calls (number, open) {made}"
        ) from None


def _kill_and_restart(
    lab: Lab, stop: threading.Event, run: SweepRun, restart_delay: float
) -> tuple[float, float]:
    """SIGKILL the agent at its moment and let it listen again `restart_delay` later: when the kill landed,
    and when the agent was up again."""
    run.agent.wait_ready()
    kill_at = run.agent.kill()
    run.agent.release(kill_at + restart_delay)
    if stop.wait(max(0.0, kill_at + restart_delay - time.time())) or lab.cancelled.is_set():
        raise LabCancelled("interrupted")
    up_at = run.agent.wait_up()
    return kill_at, up_at


def _point_settled(run: SweepRun, watch: AttemptWatch, callees: CalleeWatch, kill_at: float) -> bool:
    """The replay completed or paused, asked a call no turn answers, waits on a call that cannot run,
    mismatches on every retry, or fails on every retry (as a clean run that fails is bad input)."""
    if _tree_settled(run, watch) or _unanswered(run.lane) or run.resolver.failure is not None:
        return True
    if callees.stuck():
        run.cannot_settle = callees.why
        return True
    # Only a target that settles on repeated mismatches needs the agent's log at every poll.
    stuck_after = run.target.stuck_after
    if stuck_after is None:
        return False
    attempts = run.agent.attempts(run.invocation_id)
    if _stuck(attempts, stuck_after):
        return True
    replays = [a for a in attempts if a.at > kill_at]
    failed = replays[-_FAILED_ATTEMPTS:]
    if len(failed) == _FAILED_ATTEMPTS and all(a.last_event == "error" for a in failed):
        row = run.lab.sql.invocation(run.invocation_id)
        run.cannot_settle = f"its replay failed {len(failed)} attempts in a row{failure_of(row)}"
        return True
    return False


@dataclass(frozen=True)
class _Kill:
    """When a point's run started, was killed, and listened again (wall clock)."""

    started: float
    """The point's start."""
    at: float
    """The kill."""
    up_at: float
    """The agent listening again."""
    waited: float = 0.0
    """Seconds the settled run waited for its clean run before it was measured: not part of its time."""


def _final_status(
    lab: Lab,
    run: SweepRun,
    row: InvocationRow | None,
    attempts: Sequence[AgentAttempt],
    unanswered: tuple[str, ...],
) -> str:
    """The point's status: the server's, or why the sweep killed a replay that could not end."""
    status = row.status if row else "unknown"
    if status not in ("completed", "paused") and unanswered:
        # Each retry would ask the same call again, and no turn of the script answers it.
        lab.admin.kill(run.invocation_id)
        return "unanswered"
    if status not in ("completed", "paused") and _stuck(attempts, run.target.stuck_after):
        # It would retry (and mismatch) until its retry policy gives up; nothing else can happen.
        lab.admin.kill(run.invocation_id)
        return "stuck"
    if status not in ("completed", "paused") and run.cannot_settle is not None:
        # Its callee would never answer: the status is the one it sat in, the invocation (and the call it
        # waits on) is ended so it does not retry on the lab's server for good.
        lab.admin.kill(run.invocation_id)
    return status


def _observe(lab: Lab, run: SweepRun, watch: AttemptWatch, kill_at: float) -> _Seen:
    """What the server and the agent's log say of the point's settled run (the stub's ledgers are read
    when it is measured, `_point_result`)."""
    row = watch.observe(lab.sql.invocation(run.invocation_id))
    # What the journal held when the kill landed, from the server's own append times (a read right after
    # the kill could already see the pause's wake-up, which the server appends without the agent).
    journal = tuple(run.journal())
    journal_at_kill = sum(1 for e in journal if (epoch(e.appended_at) or 0.0) <= kill_at)
    agent_attempts = run.agent.attempts(run.invocation_id)
    unanswered = _unanswered(run.lane)
    status = _final_status(lab, run, row, agent_attempts, unanswered)
    return _Seen(status, journal, journal_at_kill, agent_attempts, watch.count(agent_attempts), unanswered)


@dataclass(frozen=True)
class _Seen:
    """What the server and the agent's log said of a point's run, once it settled."""

    status: str
    """The point's status (`_final_status`)."""
    journal: tuple[JournalEntry, ...]
    """The final journal."""
    journal_at_kill: int
    """Entries the journal held when the kill landed."""
    attempts: list[AgentAttempt]
    """The attempts that reached the agent."""
    attempt_count: int
    """Attempts in all, those that never reached the agent included."""
    unanswered: tuple[str, ...]
    """Calls no turn of the script answers."""


def _point_result(
    run: SweepRun, script_name: str, clean: CleanRun, point: CrashPoint, kill: _Kill, seen: _Seen
) -> PointResult:
    """The point's record: what its run paid against the clean run, and what it saw on the way."""
    status, journal, journal_at_kill = seen.status, seen.journal, seen.journal_at_kill
    agent_attempts, attempt_count, unanswered = seen.attempts, seen.attempt_count, seen.unanswered
    answer = run.answer(status)
    calls = run.lane.model_calls()
    tools = run.lane.tool_runs()
    at_kill = calls_at_kill(calls, kill.at, clean)
    steps = run.steps()
    not_placed = why_not_placed(point, journal, journal_at_kill, at_kill.held)
    stuck = run.resolver.waiting_on_nothing() if status != "completed" else None
    if stuck is not None:
        # Its replay sits on a wait the sweep could not resolve: no verdict on what it would have paid.
        not_placed = "; ".join(filter(None, [not_placed, f"its run could not finish: it waits for {stuck}"]))
    elif run.cannot_settle is not None and status != "completed":
        not_placed = "; ".join(filter(None, [not_placed, f"its run could not finish: {run.cannot_settle}"]))
    paid = bill(calls, run.price_model)
    service, handler, input = run.target.recorded_as()
    return PointResult(
        crash_point=point.name,
        order=point.order,
        kind=point.kind,
        mode=run.target.mode,
        service=service,
        handler=handler,
        input=input,
        script=script_name,
        status=status,
        answer_matches=status == "completed" and answer == clean.answer,
        answer=answer,
        model_calls=len(calls),
        extra_model_calls=len(calls) - clean.model_calls,
        model_calls_in_flight=at_kill.in_flight,
        model_answers_at_kill=at_kill.answered,
        answers_asked_again=at_kill.asked_again,
        paid_again_by=at_kill.asked_again_by,
        undecided=undecided_why(at_kill),
        step_runs=steps,
        extra_step_runs=sum(n for _, n in steps) - sum(n for _, n in clean.step_runs),
        steps_in_flight=run.trace.steps_in_flight(run.invocation_id, kill.at),
        steps_run_again=run.trace.steps_run_again(run.invocation_id, kill.at),
        answered_differently=answered_differently(calls, clean),
        coverage=coverage_of(run, calls),
        tool_runs=len(tools),
        attempts=attempt_count,
        mismatches=mismatches_of(agent_attempts),
        journal_at_kill=journal_at_kill,
        confirmed=not not_placed,
        not_placed=not_placed,
        unanswered=unanswered,
        invocation_id=run.invocation_id,
        wall_time=round(time.time() - kill.started - kill.waited, 3),
        started_at=kill.started,
        killed_at=round(kill.at - kill.started, 3),
        down_time=round(kill.up_at - kill.at, 3),
        model_log=model_log_of(
            calls, kill.started, price_model=run.price_model, clean_turns=clean.model_turns
        ),
        tool_log=tool_log_of(tools, kill.started),
        attempt_log=attempt_log_of(agent_attempts, attempt_count, status, kill.started),
        journal=journal,
        covers=point.covers,
        usage=paid.usage,
        cost_usd=paid.cost_usd,
        extra_cost_usd=bill(extra_calls(calls, clean.model_turns), run.price_model).cost_usd,
        price_model=run.price_model,
        prices_as_of=PRICES_AS_OF,
        retry_policy=run.deployment.retry_policy(run.service, run.target.handler) if run.deployment else "",
    )
