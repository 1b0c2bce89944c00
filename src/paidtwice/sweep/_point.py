"""A crash point's run: the target run to the point's moment on an agent of its own, killed there,
restarted, and measured against the clean run once its replay settled; run again when the kill missed.

The agent is stopped at the moment (host gates, held stub calls, a held frame, or the pause), the lab
confirms from the journal and the ledgers that it is there, SIGKILLs it, restarts it after the restart
delay, waits until the invocation completes or pauses, and counts what the replay paid again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from paidtwice._exceptions import AdminError, ExperimentError, LabCancelled
from paidtwice.agent import AgentAttempt
from paidtwice.engine import InvocationRow, JournalEntry, epoch
from paidtwice.lab import (
    PRICES_AS_OF,
    Lab,
    PolledAttempts,
    Poller,
    attempt_log_of,
    bill,
    extra_calls,
    mismatches_of,
    model_log_of,
    tool_log_of,
)
from paidtwice.results import CleanRun, CrashPoint, PointResult
from paidtwice.stub import Hold, Script
from paidtwice.sweep._callees import CalleeWatch, failure_of
from paidtwice.sweep._coverage import coverage_of
from paidtwice.sweep._options import KillPlan, ModelStub
from paidtwice.sweep._paid import answered_differently, calls_at_kill, undecided_why, why_not_placed
from paidtwice.sweep._runs import (
    FAILED_ATTEMPTS,
    SETTLE_TIMEOUT,
    SweepRun,
    lost_to_clock,
    run_progress,
    stuck_on_mismatch,
    tree_settled,
    unanswered_calls,
    wait_or_stop,
)
from paidtwice.targets import Target

__all__ = ["Parked", "park", "point_run"]

_HOLD_SECONDS = 60.0
"""A held call stays open this long; the kill ends it much sooner (the stub sees the caller leave)."""
_MOMENT_TIMEOUT = 60.0
"""Seconds a run may go without progress on its way to the point's moment (`run_progress`)."""
_ENDED_EVERY = 1.0
"""Seconds between reads of the journal for the run's output while it is not at its moment."""
_PAUSE_ENDED = "Notification: Sleep"
"""A durable pause's end, as the journal labels it."""
_JOURNAL_STILL = 15.0  # stopped there, the journal short and still this long: kill, the point says not placed


def point_run(
    lab: Lab,
    stop: threading.Event,
    poller: Poller,
    target: Target,
    script: Script,
    script_name: str,
    clean: CleanRun,
    point: CrashPoint,
    *,
    tag: str,
    kills: KillPlan = KillPlan(),
    model: ModelStub = ModelStub(),
    baseline: Callable[[], tuple[CleanRun, CrashPoint]] | None = None,
    parked: Parked | None = None,
) -> PointResult:
    """Run the target to the point's moment, kill it there, restart it and measure what the replay paid.
    A run whose kill missed the moment (or whose agent never reached it) is run again, on an agent and an
    invocation of its own, up to `kills.retries` times; the record is the last run's, with the misses (one
    that never reached the moment has the status `NOT_REACHED`: not placed, undecided, the sweep goes on).
    With `baseline`, the run is measured against what it returns once the run settled (the clean run and the
    point as the clean run planned it: a point started from a kept plan, beside its clean run), not against
    `clean` and `point`. With `parked`, its first run is that run, held at a pause before the point (`park`),
    where the kind can hand it the point; the point's time counts from that run's start."""
    started = parked.started if parked is not None else time.time()
    missed: list[str] = []
    waited = 0.0
    if parked is not None and not parked.hand(script, point):
        parked.close()
        parked = None

    def measured_by() -> tuple[CleanRun, CrashPoint]:
        nonlocal waited
        since = time.time()
        found = baseline() if baseline is not None else (clean, point)
        waited += time.time() - since
        return found

    while True:
        run = parked.run if parked is not None else SweepRun(
            lab,
            target,
            _holding(script, point),
            tag=f"{tag}_t{len(missed)}" if missed else tag,
            gate=point.gate,
            model=model,
            hold=point.hold_entries,
            hold_inbound=_holds_inbound(point),
            hold_at=point.journal_entries,
            hold_ops=_held_waits(point),
            alone=True,
        )  # fmt: skip
        with run.agent:
            try:
                ahead = parked.started if parked is not None else None
                kill, seen = _kill_at_moment(lab, stop, poller, run, point, clean, kills, started=ahead)
            except _GaveUp as err:
                why = str(err)
                if len(missed) >= kills.retries and parked is None:
                    # The other points go on: this one is said not placed, why, with what its run did.
                    measured, planned = measured_by()
                    kill = _Kill(started=err.started, at=err.at, up_at=err.at, first=started, waited=waited)
                    return _point_result(run, script_name, measured, planned, kill, err.seen, missed, why)
            else:
                why = _kill_missed(run, point, seen, kill.at)
                late = "" if why else _lost_race(run, seen)
                if not (why or late) or (len(missed) >= kills.retries and parked is None):
                    measured, planned = measured_by()
                    kill = dataclasses.replace(kill, first=started, waited=waited)
                    return _point_result(run, script_name, measured, planned, kill, seen, missed, late=late)
                why = why or late
        if parked is not None:
            # The parked run went past its pause or its moment before it was handed the point (the agent
            # suspended in the pause, say): the lab's guess, not a miss of the point's. Its own run follows.
            parked = None
            continue
        missed.append(why)
        if baseline is not None:
            # A point of a kept plan says its miss only once its clean run kept the plan: a plan thrown away
            # throws its points' runs away unsaid (`baseline` raises then).
            measured_by()
        said = why if why.startswith(_LOST_RACE) else f"the kill missed its moment ({why})"
        lab.echo(
            f"paidtwice: {target.mode}/{script_name} #{point.order} {point.name}: {said}; run again "
            f"({len(missed)} of {kills.retries} retries)"
        )


class Parked:
    """A run started before its point was known, on an agent, lane and invocation of its own, whose first
    live durable pause is held open: it stands for a point after that pause that its clean run has not shown
    yet, and is handed it once it does (`hand`), the pause's wait already behind it: the host takes the
    point's gates on its stdin, a command's proxy holds the point's journal entry (`Agent.go_on`)."""

    def __init__(self, run: SweepRun) -> None:
        self.run = run
        self.started = time.time()
        run.start(replacement=True, hold_pause=True)

    def hand(self, script: Script, point: CrashPoint) -> bool:
        """Stop the run at `point` from now on, as a run started for it is (the lane's held calls, the
        gates or the journal held at the proxy), and let the pause go on; False if the kind cannot hold that
        moment (the run is then closed, not used)."""
        self.run.lane.script = _holding(script, point)
        self.run.resolver.hold_at = point.journal_entries
        self.run.resolver.hold_ops = _held_waits(point)
        return self.run.agent.go_on(
            gate=point.gate, hold_entries=point.hold_entries, hold_inbound=_holds_inbound(point)
        )

    def close(self) -> None:
        """Not handed a point: its invocation killed on the server, its agent stopped."""
        try:
            self.run.resolver.stop()
            if self.run.invocation_id:
                with contextlib.suppress(AdminError):
                    self.run.lab.admin.kill(self.run.invocation_id)
        finally:
            self.run.agent.close()


def park(lab: Lab, target: Target, script: Script, *, tag: str, model: ModelStub = ModelStub()) -> Parked:
    """A run of the target held at its first live durable pause (`Parked`), tagged `tag`."""
    run = SweepRun(lab, target, script, tag=tag, gate=None, model=model, alone=True)
    try:
        return Parked(run)
    except BaseException:
        run.agent.close()
        raise


NOT_REACHED = "not reached"
"""The status of a point whose run never reached its moment after its retries: never killed nor replayed."""


class _NotReached(Exception):
    """The agent was not seen at the point's moment in time: its message says what was missing."""


class _GaveUp(Exception):
    """A run the sweep gave up on before its moment (`_NotReached`): why, when it started and when the sweep
    gave up (wall clock), and what it had done by then."""

    def __init__(self, why: str, *, started: float, at: float, seen: _Seen) -> None:
        super().__init__(why)
        self.started = started
        self.at = at
        self.seen = seen


def _kill_at_moment(
    lab: Lab,
    stop: threading.Event,
    poller: Poller,
    run: SweepRun,
    point: CrashPoint,
    clean: CleanRun,
    kills: KillPlan,
    *,
    started: float | None = None,
) -> tuple[_Kill, _Seen]:
    """One run of the point: to the moment, the kill, the restart, until the replay settled; when the kill
    landed, and what the server and the agent said once it settled. With `started`, the run was started
    then (a parked run, handed the point), else now."""
    if started is None:
        started = time.time()
        run.start(replacement=True)
    invocation_id = run.invocation_id
    polled = poller.follow(invocation_id)
    try:
        _wait_for_moment(lab, stop, run, point, polled)
        kill_at, up_at = _kill_and_restart(lab, stop, run, kills.restart_delay)
        callees = CalleeWatch(
            lambda: lab.sql.callees(invocation_id),
            agent=run.agent.uri,
            calls="Command: Call" in clean.journal,
        )
        try:
            wait_or_stop(
                lab,
                stop,
                f"{invocation_id} to settle",
                lambda: _point_settled(run, polled, callees, kill_at),
                timeout=SETTLE_TIMEOUT,
                progress=run_progress(run, polled),
            )
        except ExperimentError:
            # No verdict on it, and no reason to stop the other points: said, with where it sat.
            row = lab.sql.invocation(invocation_id)
            status = row.status if row is not None else "unknown"
            run.cannot_settle = (
                "it did not complete or pause after the restart, and made no progress for "
                f"{SETTLE_TIMEOUT:.0f}s (it is {status}{failure_of(row)})"
            )
    except _NotReached as err:
        # Never killed at its moment: it is not replayed on the lab's server. It may have run past the
        # moment to its end (the server then refuses the kill): what is said is why the moment was missed.
        gave_up = _GaveUp(str(err), started=started, at=time.time(), seen=_seen_unkilled(run, polled))
        with contextlib.suppress(AdminError):
            lab.admin.kill(invocation_id)
        raise gave_up from None
    finally:
        run.resolver.stop()
        poller.forget(invocation_id)
    # What the server and the agent say is read before any wait: a replay the sweep stops (stuck,
    # unanswered) is stopped as soon as it settled, whatever the point is measured against.
    seen = _observe(lab, run, polled, kill_at)
    return _Kill(started=started, at=kill_at, up_at=up_at), seen


def _seen_unkilled(run: SweepRun, polled: PolledAttempts) -> _Seen:
    """What a run the sweep gave up on before its moment had done: its journal then, its attempts."""
    journal = tuple(run.journal())
    attempts = run.agent.attempts(run.invocation_id)
    return _Seen(
        NOT_REACHED, journal, len(journal), attempts, polled.count(attempts), unanswered_calls(run.lane)
    )


_LOST_RACE = "its replay lost a race to a timer"


def _lost_race(run: SweepRun, seen: _Seen) -> str:
    """Why the replay took a timer's branch it was not meant to ("" when it did not): a wait its kill had
    held, answered late after it on a busy machine, lost to a timer that fired after the kill, where the
    answer was due before it (`lost_to_clock`). Its answer is then not the code's, and it is run again."""
    lost = lost_to_clock(run, seen.journal)
    return f"{_LOST_RACE} ({lost})" if lost else ""


def _kill_missed(run: SweepRun, point: CrashPoint, seen: _Seen, kill_at: float) -> str:
    """Why the run's kill did not land at the point's moment ("" when it did)."""
    held = sum(1 for c in run.lane.model_calls() if c.started < kill_at and c.delivered is False)
    return _missed_by(run, point, seen, held)


def _missed_by(run: SweepRun, point: CrashPoint, seen: _Seen, held: int) -> str:
    """`why_not_placed`, where a root that went on while sent callees were held at the moment (as it may in
    any run: it does not wait for them) is not a miss, nor a pause's end journaled while the host withheld
    it from the handler (the handler was still in the pause)."""
    at_kill, moment = seen.journal_at_kill, point.journal_entries
    if at_kill > moment and run.trace.root_goes_on(run.invocation_id, point):
        at_kill = moment
    ended = [e.label() for e in seen.journal[moment : moment + 1]]
    if point.kind == "pause" and at_kill == moment + 1 and ended and ended[0].startswith(_PAUSE_ENDED):
        at_kill = moment
    return why_not_placed(point, seen.journal, at_kill, held)


def _holds_inbound(point: CrashPoint) -> bool:
    """Whether the point's journal entry is held on the server's frames too: not after an answer outside the
    journal, where the agent must have every frame (it stops at its next entry)."""
    return point.kind != "model-returned"


def _held_waits(point: CrashPoint) -> frozenset[str]:
    """The waits the point's run resolves only after its kill: those its clean run resolved after the
    moment, and the one a waiting point waits on."""
    waiting = {point.pause_op} if point.kind == "waiting" and point.pause_op is not None else set()
    return frozenset(point.held_waits) | waiting


def _holding(script: Script, point: CrashPoint) -> Script:
    """The script with the point's model calls and tool call held open at the stub."""
    if point.model_holds:
        # Billed as cut off as the request went out, whenever in the hold the kill lands.
        first, *more = (Hold.of(name, _HOLD_SECONDS, billed_after=0.0) for name in point.model_holds)
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
        # The first call of each name is the held one (a restarted agent names its calls anew).
        calls = {c.name: c for c in reversed(run.lane.model_calls())}
        if not all(n in calls and calls[n].finished is None for n in point.model_holds):
            return False
    if point.tool_hold is not None:
        tools = run.lane.tool_runs()
        n = point.tool_hold
        return len(tools) >= n and tools[n - 1].finished is None
    return True


def _wait_for_moment(
    lab: Lab, stop: threading.Event, run: SweepRun, point: CrashPoint, polled: PolledAttempts
) -> None:
    """Wait until the agent is stopped at the moment and the journal (read only then) holds its entries;
    `_NotReached` if it is not there in time, or its run ended without stopping there."""
    seen: list[tuple[int, float]] = []  # (journal length, since when), while stopped there
    ended: list[float] = [time.monotonic()]  # when the journal was last read for the output, while not there

    def at_moment() -> bool:
        if not _stopped_there(run, point):
            seen.clear()
            if time.monotonic() - ended[0] >= _ENDED_EVERY:
                # A tree past its end never comes back to the moment: no need to wait out the timeout. (Its
                # root's output alone is not its end: a handler it sent to may still be on its way there.)
                ended[0] = time.monotonic()
                return run.tree_ended() and not _stopped_there(run, point)
            return False
        entries = len(run.journal())
        if not seen or seen[0][0] != entries:
            seen[:] = [(entries, time.monotonic())]
        return entries >= point.journal_entries or time.monotonic() - seen[0][1] >= _JOURNAL_STILL

    what = f"{point.name} ({run.invocation_id})"
    try:
        wait_or_stop(lab, stop, what, at_moment, timeout=_MOMENT_TIMEOUT, progress=run_progress(run, polled))
        if _stopped_there(run, point):
            return
        missing = f"its run ended (its output journaled, what it sent completed) without stopping at {what}"
    except ExperimentError as err:
        missing = str(err)
    # Say what was missing: the stop (gate, hold, held call) or the journal's entries.
    made = [(c.name, c.finished is None) for c in run.lane.model_calls()]
    raise _NotReached(
        f"{missing}: stopped there {_stopped_there(run, point)}, journal {len(run.journal())} of "
        f"{point.journal_entries} entries, model calls (name, open) {made}"
    ) from None


def _kill_and_restart(
    lab: Lab, stop: threading.Event, run: SweepRun, restart_delay: float
) -> tuple[float, float]:
    """SIGKILL the agent at its moment and let it listen again `restart_delay` later: when the kill landed,
    and when the agent was up again."""
    run.agent.wait_ready()
    kill_at = run.agent.kill()
    # The approval may come while the agent is down, as a person's would: a timer raced against it (armed
    # at the moment) must not win only because a loaded machine took seconds to restart the agent.
    run.resolver.release()
    run.agent.release(kill_at + restart_delay)
    if stop.wait(max(0.0, kill_at + restart_delay - time.time())) or lab.cancelled.is_set():
        raise LabCancelled("interrupted")
    up_at = run.agent.wait_up()
    return kill_at, up_at


def _point_settled(run: SweepRun, polled: PolledAttempts, callees: CalleeWatch, kill_at: float) -> bool:
    """The replay completed or paused, asked a call no turn answers, waits on a call that cannot run,
    mismatches on every retry, or fails on every retry (as a clean run that fails is bad input)."""
    if tree_settled(run, polled) or unanswered_calls(run.lane) or run.resolver.failure is not None:
        return True
    if callees.stuck():
        run.cannot_settle = callees.why
        return True
    # Only a target that settles on repeated mismatches needs the agent's log at every poll.
    stuck_after = run.target.stuck_after
    if stuck_after is None:
        return False
    attempts = run.agent.attempts(run.invocation_id)
    if stuck_on_mismatch(attempts, stuck_after):
        return True
    replays = [a for a in attempts if a.at > kill_at]
    failed = replays[-FAILED_ATTEMPTS:]
    if len(failed) == FAILED_ATTEMPTS and all(a.last_event == "error" for a in failed):
        row = run.lab.sql.invocation(run.invocation_id)
        run.cannot_settle = f"its replay failed {len(failed)} attempts in a row{failure_of(row)}"
        return True
    return False


@dataclass(frozen=True)
class _Kill:
    """When a point's run started, was killed, and listened again (wall clock)."""

    started: float
    """The start of the run the record is of."""
    at: float
    """The kill."""
    up_at: float
    """The agent listening again."""
    first: float | None = None
    """The start of the point's first run (its retries' time is its time too); None: `started`."""
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
        _end(lab, run.invocation_id)
        return "unanswered"
    if status not in ("completed", "paused") and stuck_on_mismatch(attempts, run.target.stuck_after):
        # It would retry (and mismatch) until its retry policy gives up; nothing else can happen.
        _end(lab, run.invocation_id)
        return "stuck"
    if status not in ("completed", "paused") and run.cannot_settle is not None:
        # Its callee would never answer: the status is the one it sat in, the invocation (and the call it
        # waits on) is ended so it does not retry on the lab's server for good.
        _end(lab, run.invocation_id)
    return status


def _end(lab: Lab, invocation_id: str) -> None:
    """Kill a replay the sweep stops; one that ended meanwhile (the server refuses the kill) is left be: the
    point is said as it was read, and the other points go on."""
    with contextlib.suppress(AdminError):
        lab.admin.kill(invocation_id)


def _observe(lab: Lab, run: SweepRun, polled: PolledAttempts, kill_at: float) -> _Seen:
    """What the server and the agent's log say of the point's settled run (the stub's ledgers are read
    when it is measured, `_point_result`)."""
    row = polled.observe(lab.sql.invocation(run.invocation_id))
    # What the journal held when the kill landed, from the server's own append times (a read right after
    # the kill could already see the pause's wake-up, which the server appends without the agent).
    journal = tuple(run.journal())
    journal_at_kill = sum(1 for e in journal if (epoch(e.appended_at) or 0.0) <= kill_at)
    agent_attempts = run.agent.attempts(run.invocation_id)
    unanswered = unanswered_calls(run.lane)
    status = _final_status(lab, run, row, agent_attempts, unanswered)
    return _Seen(status, journal, journal_at_kill, agent_attempts, polled.count(agent_attempts), unanswered)


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


def _undecided_because(run: SweepRun, point: CrashPoint, seen: _Seen, held: int, never: str) -> str:
    """Why the point has no verdict ("" when it has one): its kill missed the moment, its run never reached
    it, or its replay could not finish."""
    not_placed = _missed_by(run, point, seen, held)
    if never:
        return f"its run never reached the moment ({never})"
    stuck = run.resolver.waiting_on_nothing() if seen.status != "completed" else None
    if stuck is not None:
        # Its replay sits on a wait the sweep could not resolve: no verdict on what it would have paid.
        return "; ".join(filter(None, [not_placed, f"its run could not finish: it waits for {stuck}"]))
    if run.cannot_settle is not None and seen.status != "completed":
        return "; ".join(filter(None, [not_placed, f"its run could not finish: {run.cannot_settle}"]))
    return not_placed


def _point_result(
    run: SweepRun,
    script_name: str,
    clean: CleanRun,
    point: CrashPoint,
    kill: _Kill,
    seen: _Seen,
    missed: Sequence[str] = (),
    never: str = "",
    *,
    late: str = "",
) -> PointResult:
    """The point's record: what its run paid against the clean run, what it saw on the way, and why the
    earlier runs' kills missed (`missed`); `never`: why its run never reached the moment (it was not killed,
    and its figures are those of a run without a crash, up to where the sweep gave up on it); `late`: why its
    replay's answer is a timer's it was not meant to be (`_lost_race`): no verdict on it."""
    status, journal, journal_at_kill = seen.status, seen.journal, seen.journal_at_kill
    agent_attempts, attempt_count, unanswered = seen.attempts, seen.attempt_count, seen.unanswered
    answer = run.answer(status)
    calls = run.lane.model_calls()
    tools = run.lane.tool_runs()
    at_kill = calls_at_kill(calls, kill.at, clean)
    steps = run.steps()
    not_placed = "; ".join(filter(None, [_undecided_because(run, point, seen, at_kill.held, never), late]))
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
        wall_time=round(time.time() - (kill.first or kill.started) - kill.waited, 3),
        started_at=kill.started,
        killed_at=None if never else round(kill.at - kill.started, 3),
        down_time=None if never else round(kill.up_at - kill.at, 3),
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
        retries=len(missed),
        missed=tuple(missed),
    )
