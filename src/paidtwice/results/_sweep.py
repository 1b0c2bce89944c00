"""What a sweep measured: the crash points of a clean run, each point's result, and the matrix of them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from paidtwice._words import count
from paidtwice.engine import JournalEntry
from paidtwice.results._deck import AttemptLine, ModelLogLine, ToolLogLine
from paidtwice.stub import NO_TOKENS, TokenUsage

__all__ = ["CleanRun", "Coverage", "CrashKind", "CrashPoint", "KillsPlaced", "PointResult", "SweepMatrix"]


CrashKind = Literal[
    "after-entry",
    "model-returned",
    "in-flight-model",
    "in-flight-step",
    "in-flight-parallel",
    "pause",
    "waiting",
]
"""Where a crash point is: after a journal entry, before the agent's next action ("after-entry"); after a
model answer came back outside the journal ("model-returned"); in flight inside a model call, a step, or
calls and steps made at once, all held ("in-flight-model", "in-flight-step", "in-flight-parallel"); in a
durable pause ("pause"); waiting for an awakeable or a Workflow's promise someone resolves ("waiting")."""


@dataclass(frozen=True)
class CrashPoint:
    """One moment a crash can land, derived from a clean run's timeline."""

    name: str
    """Where it is, in words: "after entry 1 (Command: Run weather)", "in flight: model call 1"."""
    order: int
    """Position in time, 1 = earliest."""
    kind: CrashKind
    """What stops the agent there (see CrashKind)."""
    journal_entries: int
    """Entries the journal holds at that moment."""
    gate: str | None = None
    """The host gates that stop the agent there, comma-separated (None: held stub calls or the pause)."""
    model_holds: tuple[str, ...] = ()
    """The model calls the stub holds open, named as the agent host names their gates (`model:2`; in a tree,
    `7/model:1`: the first call of the callee at place 7, whichever order the callees ask in) or, where no
    host names them, `model:N` (the invocation's N-th call); all are in flight at the moment."""
    tool_hold: int | None = None
    """The stub tool call held open."""
    pause_op: str | None = None
    """The context operation that is the durable pause (or the wait), named as the host names its gates
    (`op:4`): the swept handler's own count, whatever its tree's callees logged between."""
    begins: float = 0.0
    """When the moment began in the clean run (wall clock): a crash from then until the next point's
    moment lands at this point."""
    covers: float = 0.0
    """The share (0..1) of the clean run's time, from its first event to its output, that is this moment:
    the chance that a crash at a uniformly random moment of the run lands here."""
    hold_entries: int | None = None
    """A command's deployment: the protocol proxy holds the server's frame that brings the journal to this
    many entries (or the attempt that starts with them), so the agent waits there."""
    held_waits: tuple[str, ...] = ()
    """The awakeables and promises (their operations, named as `pause_op`) the handler made before the
    moment and the clean run saw resolved after it: the sweep resolves them only once the agent was killed
    and is back, so no resolution lands between the moment and the kill."""


@dataclass(frozen=True)
class Coverage:
    """What a run reached of what its handler offers: the model's tools, the waits for a person, the
    handlers of its invocation tree. What a sweep did not reach, it did not check."""

    tools_offered: tuple[str, ...] = ()
    """The function tools the model was offered, by name (every request's)."""
    tools_called: tuple[str, ...] = ()
    """Those the stub's answers called."""
    hosted_tools: tuple[str, ...] = ()
    """Hosted tools offered (the provider runs them: OpenAI's `web_search`, ...): no stub answer calls
    them, so what follows from them is never swept."""
    waits_resolved: tuple[str, ...] = ()
    """The awakeables and Workflow promises the run waited for that the sweep resolved ("awakeable 1",
    "promise 'approval'")."""
    waits_unresolved: tuple[str, ...] = ()
    """Those nothing resolved."""
    handlers_ran: tuple[str, ...] = ()
    """SERVICE/HANDLER of the handlers of its invocation tree that ran, the swept one first."""

    def __or__(self, other: Coverage) -> Coverage:
        """What either run reached."""

        def union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(dict.fromkeys((*a, *b)))

        resolved = union(self.waits_resolved, other.waits_resolved)
        return Coverage(
            tools_offered=union(self.tools_offered, other.tools_offered),
            tools_called=union(self.tools_called, other.tools_called),
            hosted_tools=union(self.hosted_tools, other.hosted_tools),
            waits_resolved=resolved,
            waits_unresolved=tuple(
                w for w in union(self.waits_unresolved, other.waits_unresolved) if w not in resolved
            ),
            handlers_ran=union(self.handlers_ran, other.handlers_ran),
        )

    @property
    def tools_not_called(self) -> tuple[str, ...]:
        """The function tools offered that no answer called."""
        return tuple(t for t in self.tools_offered if t not in self.tools_called)


_ENDED = ("completed", "paused", "stuck", "unanswered")
"""The statuses of a point whose replay ended (or that the sweep ended, knowing why)."""


@dataclass(frozen=True)
class PointResult:
    """What one crash point measured."""

    crash_point: str
    """The point's name."""
    order: int
    """Its position in time."""
    kind: CrashKind
    """Its kind (see CrashKind)."""
    mode: str
    """Agent mode ("naive", "journaled", "SERVICE/HANDLER" for a user's app, or a command's label:
    Target.mode)."""
    script: str
    """Stub script (steady, drifting, changed)."""
    status: str
    """Final status: completed, paused, stuck (a journal mismatch on every retry; killed by the sweep) or
    unanswered (the replay made a model call no turn of the script answers; killed by the sweep); for a
    replay that could not finish (`not_placed` says why), the status it sat in (running, backing-off,
    suspended); "not reached" for a run that never reached the point's moment, so was never killed nor
    replayed (`not_placed` says what was missing)."""
    answer_matches: bool
    """The invocation completed with the clean run's answer."""
    answer: str | None
    """The answer, when completed."""
    model_calls: int
    """Model calls the stub ledger counted on the point's lane (its own, serving this one invocation)."""
    extra_model_calls: int
    """Model calls beyond the clean run's."""
    model_calls_in_flight: int
    """Model calls in flight at the kill (made, answer never delivered)."""
    model_answers_at_kill: int
    """Model answers delivered to the agent before the kill (the stub's ledger)."""
    answers_asked_again: int
    """Model calls after the kill for a call answered before it (its turn, and which of the calls a matched
    turn answers): answers paid for again (each retry that asks again counts). Zero when every answer that
    had come back was journaled."""
    step_runs: tuple[tuple[str, int], ...]
    """Real executions of each ctx.run step, by name (the host's step log; replays excluded)."""
    extra_step_runs: int
    """Step executions beyond the clean run's, all steps together."""
    steps_in_flight: int
    """Step executions started and not finished at the kill."""
    tool_runs: int
    """Calls to the stub's tool endpoints (the deck's weather tool)."""
    attempts: int
    """Attempts of the invocation (sys_invocation polled; at least those the agent saw)."""
    mismatches: int
    """Attempts that failed with a journal mismatch (RT0016)."""
    journal_at_kill: int
    """Journal entries when the kill landed (read right after it)."""
    confirmed: bool
    """The journal held exactly the point's entries at the kill, and the held calls were in flight."""
    unanswered: tuple[str, ...]
    """Why each model call no turn of the script answers was not answered (the stub's ledger); empty when
    every call was answered."""
    invocation_id: str
    """The point's invocation."""
    wall_time: float
    """Seconds from the point's start until it settled."""
    started_at: float | None = None
    """Wall-clock time (seconds since the epoch) the point started; the `at` of its logs count from it."""
    killed_at: float | None = None
    """Seconds from the point's start that the kill landed."""
    down_time: float | None = None
    """Measured seconds from the kill until the agent listened again."""
    model_log: tuple[ModelLogLine, ...] = ()
    """Every model call of the point's invocation, in order."""
    tool_log: tuple[ToolLogLine, ...] = ()
    """Every call to the stub's tool endpoints, in order."""
    attempt_log: tuple[AttemptLine, ...] = ()
    """Every attempt, in order (those that found the agent down included)."""
    journal: tuple[JournalEntry, ...] = ()
    """The final journal."""
    covers: float = 0.0
    """The share of the clean run's time this moment covers (see CrashPoint.covers)."""
    usage: TokenUsage = NO_TOKENS
    """Tokens billed for the point's model calls."""
    cost_usd: float = 0.0
    """Their price in dollars, at `price_model`."""
    extra_cost_usd: float = 0.0
    """What a crash at this moment cost: the price of the calls it added, every call that is not the first
    delivered answer of its call (as for runs; with the steady script that is the cost beyond the clean
    run's, to the token)."""
    price_model: str = ""
    """The model whose prices the dollars are at."""
    prices_as_of: str = ""
    """The price data's date."""
    service: str = ""
    """The swept service's name in the user's code, where the lab ran each point under a name of its own;
    empty for the deck's agent, which takes the lab's name from its environment."""
    handler: str = ""
    """The swept handler's name; empty for the deck's agent (its Agent/run)."""
    input: Any = None
    """The JSON input the handler was called with (given, or made from its input schema); None for the
    deck's agent."""
    not_placed: str = ""
    """Why the sweep could not place the kill at the point's moment (what the journal or the held calls
    showed instead); empty when it landed there. Its figures are a real crash's, at another moment."""
    paid_again_by: tuple[tuple[str, int], ...] = ()
    """`answers_asked_again` by the handler that asked again, (SERVICE/HANDLER, count), for the swept
    handler and the handlers of its app it calls (its invocation tree, followed by paidtwice's host); empty
    where the calls do not say who made them (a command's deployment, the deck's agent)."""
    steps_run_again: int | None = None
    """Step executions after the kill at a place of the handler's code where one had started before it:
    the work run again (those cut off in flight included). A step run for the first time after the kill,
    further along or on another path, is not one. None where the trace cannot tell (a command's
    deployment): `extra_step_runs` is read instead."""
    coverage: Coverage = Coverage()
    """What the point's run reached: the tools called, the waits resolved, the handlers that ran."""
    answered_differently: bool = False
    """The replay was given an answer the clean run was not given for the same call (the `changed`
    script's second answer, say): from there on it may take another path than the clean run's, so calls
    and steps beyond the clean run's are its new path's, not work paid again."""
    retry_policy: str = ""
    """The invocation retry policy the lab's server applied to the swept handler, in words, as its
    registration of the point's agent gave it ("first retry after 250ms, x2, at most 1m apart, 40
    attempts, then pause"): the app's own settings (handler over service) over the server's defaults."""
    undecided: str = ""
    """Why the point's verdict is not proven (empty when it is): answers asked again from model calls the
    clean run's wire could not place inside a step or outside every one (`CleanRun.calls_undecided`),
    counted as paid again."""
    retries: int = 0
    """Times the point was run again, on an agent and an invocation of its own, because an earlier run's kill
    missed its moment; 0: the first run is the record's. The record is the last run's."""
    missed: tuple[str, ...] = ()
    """Why each earlier run's kill missed the moment (where it landed instead), in order."""

    @property
    def swept(self) -> str:
        """What was swept, as the record names its target: the user's SERVICE/HANDLER (`recorded_as`),
        else its `mode` (the deck's agent, "naive" or "journaled")."""
        return f"{self.service}/{self.handler}" if self.service and self.handler else self.mode

    @property
    def pays_twice(self) -> bool:
        """Paid again for work that had completed: an answer asked for again, model calls beyond those cut
        off in flight (on the clean run's path), steps run again beyond those cut off in flight. Work
        done for the first time on another path is not (see `other_path`). Of a replay that could not
        finish, only an answer asked for again: its other runs may be retries of work that never completed
        (a failing step), no verdict."""
        if self.status not in _ENDED:
            return self.answers_asked_again > 0
        return self.calls_paid_again > 0 or self.step_runs_paid_again > 0

    @property
    def calls_paid_again(self) -> int:
        """Model calls paid again: the answers asked for again, or on the clean run's path the calls beyond
        its own and beyond those cut off in flight, whichever is more (on another path, calls beyond the
        clean run's are that path's own, `new_path_model_calls`)."""
        if self.answered_differently:
            return self.answers_asked_again
        return max(self.answers_asked_again, self.extra_model_calls - self.model_calls_in_flight)

    @property
    def step_runs_paid_again(self) -> int:
        """Step executions run again beyond those cut off in flight (where the trace cannot tell a step run
        again from one run for the first time: those beyond the clean run's, on the clean run's path)."""
        if self.steps_run_again is not None:
            return max(0, self.steps_run_again - self.steps_in_flight)
        if self.answered_differently:
            return 0
        return max(0, self.extra_step_runs - self.steps_in_flight)

    @property
    def new_path_model_calls(self) -> int:
        """On another path (`answered_differently`): its model calls beyond the clean run's, less those
        asked again (cut off in flight, or answered before the kill); negative for a shorter one."""
        if not self.answered_differently:
            return 0
        return self.extra_model_calls - self.model_calls_in_flight - self.answers_asked_again

    @property
    def new_path_step_runs(self) -> int:
        """On another path: its step executions beyond the clean run's, less those run again."""
        if not self.answered_differently:
            return 0
        again = self.steps_in_flight if self.steps_run_again is None else self.steps_run_again
        return self.extra_step_runs - again

    def other_path(self, clean: CleanRun) -> str | None:
        """How the replay, given another answer than the clean run was, took a path of more work than the
        clean run's, in words (the new path's cost: its model calls and steps run for the first time);
        None if it did not (a shorter path is `shorter_path`'s)."""
        calls, steps = self.new_path_model_calls, self.new_path_step_runs
        if self.status != "completed" or calls <= 0 and steps <= 0:
            return None
        ran = dict(self.step_runs)
        clean_ran = dict(clean.step_runs)
        new = [name for name in ran if name not in clean_ran]
        parts = [
            f"given another answer than the clean run's, it took another path: new work, not paid twice: "
            f"{count(calls, 'model call', sign=True)} and {count(steps, 'step run', sign=True)} beyond the "
            "clean run's, run for the first time"
        ]
        if new:
            parts.append("steps the clean run never ran: " + ", ".join(new))
        return "; ".join(parts)

    def shorter_path(self, clean: CleanRun) -> str | None:
        """How the replay that completed took a shorter path than the clean run's, in words; None if it did
        not (a replay that ended paused or stuck did not finish any path)."""
        if self.status != "completed" or (self.extra_model_calls >= 0 and self.extra_step_runs >= 0):
            return None
        if self.other_path(clean) is not None:
            return None
        ran = dict(self.step_runs)
        skipped = [name for name, n in clean.step_runs if ran.get(name, 0) < n]
        parts = []
        if skipped:
            parts.append("answered without " + ", ".join(f"step {name}" for name in skipped))
        # Which calls it left out, by the script's turn that answers them ("never asked turns 2, 3 of the
        # script"; "asked turn 2 once, the clean run 3 times"): an agent with no step took its shorter path in
        # its calls alone.
        asked = Counter(line.turn for line in self.model_log)
        fewer = [(t, n) for t, n in sorted(Counter(clean.model_turns).items()) if asked[t] < n]
        never = [str(t) for t, _ in fewer if not asked[t]]
        if never:
            parts.append(f"never asked turn{'s' if len(never) > 1 else ''} {', '.join(never)} of the script")
        for turn, times in fewer:
            if asked[turn]:
                parts.append(
                    f"asked turn {turn} of the script {_times(asked[turn])}, the clean run {_times(times)}"
                )
        parts.append(
            f"{count(self.model_calls, 'model call')} in all, the clean run {clean.model_calls}"
            + (f" ({self.model_calls_in_flight} cut off in flight)" if self.model_calls_in_flight else "")
        )
        return "; ".join(parts)


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


@dataclass(frozen=True)
class CleanRun:
    """The clean run a sweep compares against."""

    status: str
    """Final status (completed)."""
    answer: str | None
    """Its answer."""
    model_calls: int
    """Model calls it made."""
    step_runs: tuple[tuple[str, int], ...]
    """Executions of each step."""
    journal: tuple[str, ...]
    """Its journal, entry labels by index."""
    invocation_id: str
    """Its invocation."""
    journaled_model_calls: int
    """Model calls made inside a ctx.run step (the host's step log), so that their answers are journaled."""
    usage: TokenUsage = NO_TOKENS
    """Tokens billed for its model calls."""
    cost_usd: float = 0.0
    """Their price in dollars."""
    model_turns: tuple[int, ...] = ()
    """The script's turn that answered each of its model calls, in order (the stub's ledger)."""
    calls_in_steps: tuple[int, ...] = ()
    """The model calls (their numbers) made inside a ctx.run step: an answer of one that came back but was
    not journaled when the agent died was cut off in flight with its step, not paid outside the journal."""
    answers: tuple[tuple[int, str, str], ...] = ()
    """What the stub answered each of its model calls: (turn, what tells the call apart (`ModelCall.asked`),
    the answer in short), in order; a replay given another answer took another path."""
    calls_undecided: tuple[int, ...] = ()
    """The model calls (their numbers) the run's trace could not place inside a step or outside every one
    (a command's deployment, seen on the wire): not in `calls_in_steps`, so their answers asked again are
    counted as paid again, and the points say they are undecided."""
    model_callers: tuple[str, ...] = ()
    """The handler (SERVICE/HANDLER) that made each of its model calls, in order: the swept handler or one
    of the handlers it calls (its invocation tree); empty where the calls do not say."""
    unfollowed: tuple[str, ...] = ()
    """The calls and sends of the handler the sweep could not follow into its tree, each "TARGET, because
    WHY": their callees' model calls, steps and kills are not in this sweep."""
    tools_called: tuple[str, ...] = ()
    """The function tools its answers called, by name: every point's run starts on this path, so what follows
    a tool no clean run called is in no point (`sweep --every-tool` gives each such tool a clean run)."""
    explicit_recovery: bool = False
    """The handler runs under restate-sdk's preview `explicit_recovery` (the agent host saw it on the
    handler or its service): a retry replays nothing, so its journaled model calls and steps are made again
    after a kill. False also where paidtwice cannot tell (a command's deployment, in another language)."""


@dataclass(frozen=True)
class SweepMatrix:
    """Every crash point of one agent mode under one stub script."""

    mode: str
    """Agent mode."""
    script: str
    """Stub script."""
    clean: CleanRun
    """The clean run."""
    points: tuple[PointResult, ...]
    """One result per crash point, in time order."""
    wall_time: float
    """Seconds from the sweep's start until the matrix's points were done (they ran concurrently with every
    other point of the sweep; those of a `--every-tool` round after the rounds before it)."""
    not_swept: str = ""
    """Why no point of it could be run, in words ("" when they were): in a sweep of several handlers, its
    clean run waits on an awakeable or a promise nothing resolves, while the other handlers are swept."""

    @property
    def expected_crash_cost_usd(self) -> float:
        """The expected extra dollars of one crash at a uniformly random moment of a clean run: each
        point's extra dollars weighted by the share of the clean run's time it covers."""
        return sum(p.covers * p.extra_cost_usd for p in self.points)

    def cost_per_thousand(self, crash_rate: float) -> float:
        """Expected extra dollars per 1,000 invocations when `crash_rate` of every 1,000 crash once."""
        return crash_rate * self.expected_crash_cost_usd

    def summary(self) -> list[str]:
        """What survived and what was paid again or lost, counted over the points."""
        n = len(self.points)
        outside = sum(p.answers_asked_again for p in self.points)
        outside_at = sum(1 for p in self.points if p.answers_asked_again)
        answered = [p for p in self.points if p.model_answers_at_kill]
        kept = sum(1 for p in answered if not p.answers_asked_again)
        flight = sum(p.model_calls_in_flight for p in self.points)
        step_flight = sum(p.steps_in_flight for p in self.points)
        steps_kept = sum(1 for p in self.points if not p.step_runs_paid_again)
        differ = sum(1 for p in self.points if p.status == "completed" and not p.answer_matches)
        paused = [p for p in self.points if p.status in ("paused", "stuck")]
        explicit = self.clean.explicit_recovery
        if explicit:
            answers = (
                "model answers: the handler runs under explicit_recovery, so a retry replays nothing and a "
                "journaled answer is asked for again after a kill: "
                + (
                    f"kept at {kept}/{len(answered)} points where an answer had come back before the kill"
                    if answered
                    else "no point had a model answer before the kill"
                )
            )
        elif not self.clean.model_calls:
            answers = "model answers: the handler calls no model (swept for its steps, state and journal)"
        elif not self.clean.journaled_model_calls:
            answers = (
                f"model answers: no model call is journaled in this agent (none of the clean run's "
                f"{count(self.clean.model_calls, 'model call')} is made inside a ctx.run step)"
            )
        elif not answered:
            answers = "model answers: no point had a model answer before the kill"
        else:
            answers = (
                f"journaled model answers at {kept}/{len(answered)} points where an answer had come back "
                "before the kill (not asked for again)"
            )
        stuck = (
            f"{len(paused)} ended paused or stuck after "
            f"{count(sum(p.mismatches for p in paused), 'mismatch', 'mismatches')}"
            if paused
            else "none ended paused or stuck"
        )
        unanswered = sum(1 for p in self.points if p.status == "unanswered")
        if unanswered:
            # Not measured to the end: the replay asked a call the script has no answer for.
            stuck += (
                f"; {unanswered} ended unanswered (a call no turn of the script answers, listed above): "
                "not measured to the end"
            )
        where = "journaled or not (explicit_recovery)" if explicit else "outside the journal"
        return [
            f"survived: the input at {n}/{n} points (every replay starts from it); completed context steps "
            f"at {steps_kept}/{n} (not run again); {answers}",
            f"paid again: {count(outside, 'model answer')} asked for again {where} "
            f"(at {count(outside_at, 'point')}); {count(flight, 'model call')} and "
            f"{count(step_flight, 'step run')} cut off in flight",
            f"lost: {count(differ, 'point')} completed with a different answer; {stuck}",
        ]


@dataclass(frozen=True)
class KillsPlaced:
    """Where a sweep's kills landed, counted over its points: at the first try, after retries, or not."""

    first_try: int
    """Points whose first kill landed at their moment."""
    after_retry: int
    """Points whose kill landed at their moment once run again."""
    not_placed: int
    """Points undecided: the kill landed elsewhere after every retry, or the replay could not finish."""
    retries: int
    """Runs made again, all points together."""

    @classmethod
    def of(cls, points: Sequence[PointResult]) -> KillsPlaced:
        placed = [p for p in points if p.confirmed]
        return cls(
            first_try=sum(1 for p in placed if not p.retries),
            after_retry=sum(1 for p in placed if p.retries),
            not_placed=len(points) - len(placed),
            retries=sum(p.retries for p in points),
        )

    def words(self, bound: int | None = None) -> str:
        """ "kills: 10 placed at the first try, 2 after a retry (3 runs again), 1 not placed", and with
        `bound`, how many retries a point had."""
        line = f"kills: {self.first_try} placed at the first try, {self.after_retry} after a retry"
        line += f" ({count(self.retries, 'run')} again)" if self.retries else ""
        line += f", {self.not_placed} not placed"
        return line + (f" (up to {count(bound, 'retry', 'retries')} a point)" if bound is not None else "")
