"""The sweep's runs: one invocation of the target on an agent of its own (`SweepRun`), and the clean run.

A crash point's run, which uses the same `SweepRun`, is `_point`'s.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from collections.abc import Callable, Hashable, Sequence

from paidtwice._exceptions import ExperimentError, ScriptFileError, UsageError
from paidtwice.agent import GATE, MISMATCH_ERROR_CODE, STEP_LOG, AgentAttempt, renamed_service
from paidtwice.engine import Deployment, JournalEntry, Refused, epoch
from paidtwice.lab import Lab, PolledAttempts, Poller, bill, settled, wait_for
from paidtwice.results import CleanRun
from paidtwice.stub import Lane, Script
from paidtwice.sweep._approvals import Resolver, lane_idle
from paidtwice.sweep._callees import Companions, failure_of, unserved_call
from paidtwice.sweep._not_swept import (
    NO_MODEL_CALL,
    CleanRunFails,
    NotSwept,
    WaitsOnNothing,
    before_first_call,
    first_line,
)
from paidtwice.sweep._options import ModelStub
from paidtwice.targets import Target

__all__ = [
    "FAILED_ATTEMPTS",
    "NO_MODEL_CALL",
    "PROGRESS_EVERY",
    "SETTLE_TIMEOUT",
    "CleanRunFails",
    "NotSwept",
    "SweepRun",
    "clean_run",
    "lost_to_clock",
    "run_progress",
    "stuck_on_mismatch",
    "tree_settled",
    "unanswered_calls",
    "wait_or_stop",
]

SETTLE_TIMEOUT = 180.0
"""Seconds a run (a clean run, a point's replay after its restart) may go without progress before it is said
not to complete or pause (`run_progress`; five times as long in all)."""
PROGRESS_EVERY = 0.5
"""Seconds between two looks at a clean run still under way (`clean_run`'s `on_progress`), at most: its plan
so far is read from the journal and the logs, so not at every poll, and only when it went on."""
FAILED_ATTEMPTS = 5
"""A clean run whose handler failed this many attempts is broken, not slow: the sweep stops and says why."""

CLOCK_RETRIES = 2
"""How many times a clean run whose wait lost to a timer it was meant to beat (the resolver ran late on a busy
machine) is run again before the sweep goes on with it."""

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
        hold_inbound: bool = True,
        hold_at: int | None = None,
        hold_ops: frozenset[str] = frozenset(),
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
        self.agent, self.trace = lab.launch(
            target,
            self.lane,
            self.service,
            env={STEP_LOG: str(self.step_log), GATE: gate or ""},
            workdir=workdir,
            hold_entries=hold,
            alone=alone,
            hold_inbound=hold_inbound,
        )
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
            hold_ops=hold_ops,
            journal_length=lambda: len(self.journal()),
            journal_labels=lambda: [e.label() for e in self.journal()],
            idle=lambda: lane_idle(self.lane),
        )

    def start(self, *, replacement: bool = False, hold_pause: bool = False) -> str:
        """Start the agent and send the invocation; its id. `replacement`: the replacement loads beside it;
        `hold_pause`: the agent's first live durable pause is held open (`Agent.start`)."""
        if replacement:
            # The replacement (without the gate) loads beside the process to serve, before the invocation is
            # sent: the kill then follows the moment at once (a tenth of a second of loading would move it).
            self.agent.prepare()
            self.agent.env[GATE] = ""
            self.agent.prepare(ahead=2)
        self.agent.start(hold_pause=hold_pause)
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

    def tree_ended(self) -> bool:
        """The invocation journaled its output and what it sent to other handlers completed (theirs too): no
        moment of its tree is still ahead. A send's callee runs on after its caller's output."""
        if self.output_at() is None:
            return False
        sent = any(e.type == "Command: OneWayCall" for e in self.journal())
        return not sent or not self.lab.sql.callees_open(self.invocation_id)

    def steps(self) -> tuple[tuple[str, int], ...]:
        return self.trace.steps(self.invocation_id)

    def answer(self, status: str) -> str | None:
        if status != "completed":
            return None
        return self.lab.ingress.output(self.invocation_id)


def wait_or_stop(
    lab: Lab,
    stop: threading.Event,
    what: str,
    condition: Callable[[], bool],
    *,
    timeout: float,
    progress: Callable[[], Hashable] | None = None,
) -> None:
    """Poll `condition`; `stop` is the sweep's own: set when one point failed, so the others stop waiting
    (the lab, which may be shared, lives on). With `progress` (`run_progress`), `timeout` counts from the
    run's last step forward (`wait_for`)."""
    wait_for(
        what,
        condition,
        timeout=timeout,
        stop=lambda: lab.cancelled.is_set() or stop.is_set(),
        progress=progress,
    )


def run_progress(run: SweepRun, polled: PolledAttempts) -> Callable[[], Hashable]:
    """How far a run got, read without asking the server: its root's journal, status and attempts as last
    polled, and the model calls its tree made."""

    def read() -> Hashable:
        row = polled.last
        seen = None if row is None else (row.status, row.journal_size, row.retry_count, row.last_start_at)
        return seen, len(run.lane.model_calls())

    return read


def unanswered_calls(lane: Lane) -> tuple[str, ...]:
    """Why each model call on the lane (one invocation's) that no turn of the script answers was not
    answered, the first call of each reason only: a retry the server starts before the sweep stops the
    invocation asks the same call again, which is not a call of its own."""
    first: dict[str, int] = {}
    for call in lane.model_calls():
        if call.unanswered:
            first.setdefault(call.answer.text, call.call)
    return tuple(f"{why} (model call {n})" for why, n in first.items())


def stuck_on_mismatch(attempts: Sequence[AgentAttempt], after: int | None) -> bool:
    """The last `after` attempts that reached the agent all failed with a journal mismatch."""
    if after is None:
        return False
    tail = [a.error_code for a in attempts[-after:]]
    return len(tail) == after and all(code == MISMATCH_ERROR_CODE for code in tail)


# -- the clean run --------------------------------------------------------------------------------------


def clean_run(
    lab: Lab,
    stop: threading.Event,
    poller: Poller,
    target: Target,
    script: Script,
    tag: str,
    model: ModelStub = ModelStub(),
    companions: Companions | None = None,
    on_progress: Callable[[SweepRun], bool] | None = None,
) -> tuple[CleanRun, SweepRun]:
    """Run the target once without a crash; the run's record, and the run (its logs plan the points).
    Its agent is closed on return, or kept by `companions` if it serves other services of the app.
    A run in which a wait the sweep meant to answer in time lost to a timer (`Resolver.lost_to_clock`) is
    run again, on an agent and an invocation of its own, up to `CLOCK_RETRIES` times, then the last kept.
    `on_progress` is called with the run while it runs, each time it went on (at least `PROGRESS_EVERY`
    apart), and once more after that, or again as long as it returns True (what it read of the run changed
    since its last call: the logs it reads may lag the journal's progress)."""
    lost: list[str] = []
    while True:
        again = f"{tag}_t{len(lost)}" if lost else tag
        run = SweepRun(lab, target, script, tag=again, gate=None, model=model)
        kept = True
        try:
            record = _clean(lab, stop, poller, run, on_progress)
            why = lost_to_clock(run)
            kept = why is None or len(lost) >= CLOCK_RETRIES
            if kept:
                if why is not None:
                    lab.echo(
                        f"paidtwice: {target.mode}/{script.name}: the clean run lost its race to a timer "
                        f"again ({why}): the sweep goes on with the timer's branch, the wait's branch unswept"
                    )
                return record, run
        finally:
            if kept and companions is not None and run.deployment is not None and run.serves_others():
                others = run.deployment.services - {run.service}
                companions.keep(run.agent, registered=run.deployment.registered, services=others)
            else:
                run.agent.close()
        lost.append(str(why))
        lab.echo(
            f"paidtwice: {target.mode}/{script.name}: the clean run lost its race to a timer ({why}); run "
            f"again ({len(lost)} of {CLOCK_RETRIES} retries)"
        )


def lost_to_clock(run: SweepRun, journal: Sequence[JournalEntry] | None = None) -> str | None:
    """How a wait the sweep meant to answer in time lost to a timer of the run's handler (the timers'
    completions as its journal holds them); None when none did. In a point's run, only the timers that fired
    after its kill released the held waits, raced against its replay's waits."""
    since = run.resolver.released_at or 0.0
    entries = run.journal() if journal is None else journal
    fired = [epoch(e.appended_at) for e in entries if e.type == "Notification: Sleep"]
    return run.resolver.lost_to_clock([at for at in fired if at is not None and at > since], since=since)


def _clean(
    lab: Lab,
    stop: threading.Event,
    poller: Poller,
    run: SweepRun,
    on_progress: Callable[[SweepRun], bool] | None,
) -> CleanRun:
    target = run.target
    try:
        run.start()
    except Refused as err:
        raise NotSwept(f"the clean run of {target.service}/{target.handler} was not sent: {err}") from None
    polled = poller.follow(run.invocation_id)
    try:
        _settle_clean(lab, stop, run, polled, on_progress)
    finally:
        run.resolver.stop()
        poller.forget(run.invocation_id)
    status = _check_clean(lab, run, target, polled)
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
        tools_called=tuple(dict.fromkeys(t.name for c in calls if c.delivered for t in c.answer.tool_calls)),
        explicit_recovery=run.trace.explicit_recovery(f"{run.service}/{target.handler}"),
    )


def _settle_clean(
    lab: Lab,
    stop: threading.Event,
    run: SweepRun,
    polled: PolledAttempts,
    on_progress: Callable[[SweepRun], bool] | None,
) -> None:
    """Wait until the clean run completes or pauses, a call goes unanswered, or it fails before any model
    call; meanwhile, tell `on_progress` how far it went."""
    name = f"{run.target.service}/{run.target.handler}"
    moved = run_progress(run, polled)
    told_at, told_seen, confirm = time.monotonic(), moved(), False

    def tell() -> bool:
        """Tell `on_progress` once the run went on since the last time, and once more after that (a plan
        read twice the same starts its points), or until it read the same twice: a run that sits in a pause
        is not read again and again."""
        nonlocal told_at, told_seen, confirm
        if on_progress is None or time.monotonic() - told_at < PROGRESS_EVERY:
            return False
        seen = moved()
        if seen != told_seen or confirm:
            changed = on_progress(run)
            told_at, told_seen, confirm = time.monotonic(), seen, seen != told_seen or changed
        return False

    def failed_attempts() -> int:
        return sum(1 for a in run.agent.attempts(run.invocation_id) if a.last_event == "error")

    def failing() -> bool:
        """An error before any model call (a client that does not reach the stub), another error attempt after
        attempt, or a call to a handler nothing serves: each would retry for good."""
        failed = failed_attempts()
        unserved = unserved_call(polled.last, name) is not None
        return failed >= FAILED_ATTEMPTS or (failed > 0 and not run.lane.model_calls()) or unserved

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
        wait_or_stop(
            lab,
            stop,
            f"clean run {run.invocation_id} to settle",
            lambda: (
                tree_settled(run, polled)
                or bool(unanswered_calls(run.lane))
                or failing()
                or waits_on_nothing()
                or tell()
            ),
            timeout=SETTLE_TIMEOUT,
            progress=moved,
        )
    except ExperimentError:
        row = lab.sql.invocation(run.invocation_id)
        journal = run.journal()
        last = f"after entry {len(journal) - 1} ({journal[-1].label()})" if journal else "with no entry"
        status = row.status if row is not None else "unknown"
        lab.admin.kill(run.invocation_id)
        raise UsageError(
            f"the clean run of {name} did not finish: it made no progress for {SETTLE_TIMEOUT:.0f}s, and is "
            f"{status} {last}"
            f"{failure_of(row)}; a sweep needs a handler that finishes on its own or once the sweep "
            "resolved what it waits for (awakeables, Workflow promises; not a service the app does not serve)"
        ) from None
    if (unserved := unserved_call(polled.last, name)) is not None and not settled(polled.last):
        lab.admin.kill(run.invocation_id)
        raise UsageError(unserved)
    if waiting and not settled(polled.last):
        lab.admin.kill(run.invocation_id)
        raise WaitsOnNothing(f"the clean run of {name} waits for {waiting[0]}")
    if run.lane.model_calls() and failed_attempts() >= FAILED_ATTEMPTS and not settled(polled.last):
        row = lab.sql.invocation(run.invocation_id)
        failures = lab.sql.failures(run.invocation_id)
        lab.admin.kill(run.invocation_id)
        error = first_line(row, failures)
        raise CleanRunFails(
            f"the clean run of {name} fails: {failed_attempts()} attempts ended in an error"
            f"{', the last attempt failed: ' + error if error else ''}; a sweep needs a handler that "
            "completes without a crash",
            name=name,
            error=error,
        )


def tree_settled(run: SweepRun, polled: PolledAttempts) -> bool:
    """The invocation settled, and what it sent to other handlers completed (a send's may run on after)."""
    if not settled(polled.last):
        return False
    sent = any(e.type == "Command: OneWayCall" for e in run.journal())
    return not sent or not run.lab.sql.callees_open(run.invocation_id)


def _check_clean(lab: Lab, run: SweepRun, target: Target, polled: PolledAttempts) -> str:
    """The clean run's status (completed), once it is one the points can be compared with: it called the
    model through the stub, the host saw every call, and the script answered each; raise otherwise."""
    row = lab.sql.invocation(run.invocation_id)
    status = row.status if row else "unknown"
    name = f"{target.service}/{target.handler}"
    made = target.input_made
    ended = None if run.lane.model_calls() else before_first_call(name, target.input, row, [], made=made)
    if ended is not None:
        if not settled(polled.last):
            lab.admin.kill(run.invocation_id)
        failures = lab.sql.failures(run.invocation_id)
        raise before_first_call(name, target.input, row, failures, made=made) or ended
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
    if status == "paused":
        # Its retry policy gave up on its failures (it pauses rather than retrying for good).
        error = first_line(row, lab.sql.failures(run.invocation_id))
        lab.admin.kill(run.invocation_id)
        said = f", the last attempt failed: {error}" if error else ""
        raise CleanRunFails(f"the clean run of {name} ended paused{said}", name=name, error=error)
    if status != "completed":
        raise ExperimentError(f"the clean run of {target.service}/{target.handler} ended {status}")
    return status
