"""What a run measured: typed records that travel from the runner to the reports and to JSON."""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from paidtwice._words import count, entry_at
from paidtwice.engine._admin import AdminCall
from paidtwice.engine._sql import JournalEntry
from paidtwice.lab._experiments import Expected, RecordedStatus
from paidtwice.stub._usage import NO_TOKENS, TokenUsage

__all__ = [
    "RESULTS_FORMAT",
    "AttemptLine",
    "Check",
    "CleanRun",
    "ComparisonRecord",
    "CrashKind",
    "CrashPoint",
    "CurvePoint",
    "CurveRecord",
    "Mismatch",
    "ModelLogLine",
    "NodeKillRecord",
    "PointResult",
    "Record",
    "RecoveryBreakdown",
    "RecoveryRecord",
    "RecoveryStep",
    "RunRecord",
    "SweepMatrix",
    "ToolLogLine",
    "append_record",
    "tagged",
    "to_jsonable",
    "write_records",
]


@dataclass(frozen=True)
class ModelLogLine:
    """One model call of the run, as the deck's log shows it."""

    call: int
    """1-based call number within the invocation."""
    turn: int
    """Conversation turn it answered."""
    ask: int
    """How many times that turn had been asked, this call included."""
    decision: str
    """"tool:get_weather" or "answer"."""
    answer: str
    """The answer's text, or the tool call it asked for."""
    delivered: bool | None
    """Whether the answer reached the agent (None: still in flight when the run ended)."""
    at: float
    """Seconds from the run's start that the request arrived."""
    finished: float | None = None
    """Seconds from the run's start that the answer was sent, or the caller found gone (None: in flight)."""
    usage: TokenUsage = NO_TOKENS
    """Tokens billed for the call (a call cut off: its prompt and what was generated until then)."""
    cost_usd: float = 0.0
    """Its price, at the run's price model."""
    extra: bool = False
    """The crash added it: it is not the first delivered answer of its call (its turn; for a matched turn
    that answers many calls, the one it asked)."""


@dataclass(frozen=True)
class AttemptLine:
    """One attempt of the invocation, read off the wire (attempts that never reached the agent included)."""

    number: int
    """1-based among all the invocation's attempts, as the retry policy counts them."""
    reached_agent: bool
    """Whether a running agent got the attempt; one that found it down never did."""
    at: float | None
    """Seconds from the run's start that the attempt reached the agent (None if it never did)."""
    retry_count: int | None
    """The server's count, in the attempt's StartMessage, of attempts failed since the last progress."""
    outcome: str
    """"completed", "suspended", "RT0016", "error N", "cut off" (killed), or "agent down"."""
    ended: float | None = None
    """Seconds from the run's start of the attempt's last frame (None if it was cut off or never reached)."""


@dataclass(frozen=True)
class ToolLogLine:
    """One execution of a tool endpoint."""

    call: int
    """1-based call number within the invocation."""
    tool: str
    """Tool name."""
    delivered: bool | None
    """Whether the result reached the agent."""
    at: float
    """Seconds from the run's start."""


@dataclass(frozen=True)
class Mismatch:
    """A journal mismatch (RT0016), read against the journal it refers to."""

    index: int | None
    """The journal entry the message is about, by the journal's entry index (commands and notifications, as
    `paidtwice journal` numbers them); None when the journal has no command at the message's index."""
    recorded: str
    """What the journal holds at that entry, read from the journal itself ("run weather")."""
    attempted: str
    """What the code attempted instead, as the message tells it."""
    labels_agree: bool
    """Whether the message's "recorded"/"attempted" labels agree with the journal."""
    message: str
    """The raw message."""
    command_index: int | None = None
    """The index the message names: the SDK's command index (commands only), shown beside the entry's."""

    @property
    def where(self) -> str:
        """ "entry 5 (command index 3)"."""
        return entry_at(self.index, self.command_index)


@dataclass(frozen=True)
class Check:
    """One figure the deck reports, against the measured one."""

    figure: str
    """What is compared ("model calls")."""
    deck: str
    """The deck's figure."""
    measured: str
    """The lab's figure."""
    ok: bool
    """Whether they agree."""


@dataclass(frozen=True)
class NodeKillRecord:
    """What a cluster node's death cost one invocation: who led its partition, who took over, the stall."""

    partition: int
    """The partition the invocation lives on (from the partition key in its id)."""
    killed_node: str
    """The node that led that partition at the kill, and was SIGKILLed ("node-2")."""
    took_over: str
    """The node that led the partition next, as restatectl first reported it."""
    takeover_after: float
    """Seconds from the kill until restatectl reported the new leader."""
    pause_left_at_kill: float
    """Seconds of the invocation's durable pause still to run at the kill: the stall below this is the
    pause itself, not the failure."""
    resumed_after: float | None
    """Seconds from the kill until the next attempt of the invocation reached the agent: the new leader
    picking it up, whatever the pause (None: none did)."""
    stall_to_next_entry: float | None
    """Seconds from the kill until the invocation's journal got its next entry (None: it got none)."""
    stall_to_completion: float | None
    """Seconds from the kill until the invocation's output was journaled (None: it never was)."""
    node_back_after: float | None
    """Seconds from the kill until the killed node, started again on its data once the invocation had
    settled, answered its health checks (None: it was not restarted, the lab being interrupted)."""


@dataclass(frozen=True)
class RecoveryBreakdown:
    """Where a run's recovery went after the first attempt reached the restarted agent (`recovery_s` minus
    `retry_wait_s`), and how long the replay took to regain what the kill lost."""

    regain_s: float | None
    """The time to regain the progress the kill lost: seconds from the replay's first step (its first context
    operation or model request in that attempt) until it called again the last context operation the
    handler had called before the kill (the host's step log). Before that first step the server delivers
    the journal and the SDK enters the handler, the same for any agent. None when the handler had called no
    operation before the kill, or the replay never got back there."""
    model_calls: int
    """Model calls the recovery made (the stub's ledger: the calls made after the agent listened again)."""
    model_wait_s: float
    """Seconds the stub took to answer them, summed (each from its request's arrival to its answer)."""
    journal_round_trips: int
    """`ctx.run` results the agent proposed and waited for the server to journal and send back (the wire)."""
    journal_wait_s: float
    """Seconds the agent waited for them, summed: from each proposal to the server's next frame."""
    other_s: float
    """The rest: the agent's own work (replaying the journal, building requests, parsing answers),
    connections, the machine's scheduling, and the output's append."""


@dataclass(frozen=True)
class RunRecord:
    """Everything one run of an experiment measured."""

    name: str
    """Experiment name."""
    mode: str
    """Agent mode."""
    stub: str
    """Stub script."""
    fault: str
    """The fault, in words."""
    restart_delay: float
    """Seconds the agent was meant to stay down after the kill."""
    status: RecordedStatus
    """Restate's final status of the invocation."""
    invocation_id: str
    """The invocation the run made."""
    service: str
    """The Restate service name the run's agent registered (each run has its own)."""
    lane: str
    """The stub lane the run's agent talked to."""
    model_calls: int
    """Model calls the stub answered or was asked for, all attempts of this invocation."""
    tool_calls: int
    """Weather tool executions."""
    answer: str | None
    """The invocation's output, when it completed."""
    journal: tuple[JournalEntry, ...]
    """The final journal."""
    model_log: tuple[ModelLogLine, ...]
    """Every model call, in order."""
    tool_log: tuple[ToolLogLine, ...]
    """Every tool call, in order."""
    attempt_log: tuple[AttemptLine, ...]
    """Every attempt, in order."""
    attempts: int
    """Attempts in all, counted against the retry policy."""
    attempts_reached_agent: int
    """Attempts after the first that reached a running agent (the replays)."""
    attempts_while_down: int
    """Attempts that failed to connect because the agent was down."""
    mismatches: int
    """Attempts that ended in a journal mismatch (RT0016)."""
    sources: dict[str, str]
    """Where each figure was read from."""
    down_time: float | None
    """Measured seconds from the kill until the agent listened again."""
    mismatch: Mismatch | None
    """The mismatch, read against the journal, when the run had one."""
    expected: Expected
    """The deck's figures for the row."""
    checks: tuple[Check, ...]
    """Each of the deck's figures against the measured one."""
    matches: bool
    """True when every check agrees."""
    wall_time: float
    """Seconds the run took."""
    deliberate_wait: float
    """Seconds of the run that were waits the experiment asks for (pauses, down time, held answers, retry
    backoff), so the lab's own overhead is wall_time minus this."""
    server_version: str
    """restate-server version the run used."""
    admin_log: tuple[AdminCall, ...] = ()
    """Admin API requests the run made, in order."""
    started_at: float | None = None
    """Wall-clock time (seconds since the epoch) the run started; the `at` of its logs count from it."""
    killed_at: float | None = None
    """Seconds from the run's start that the kill landed (None: no kill)."""
    usage: TokenUsage = NO_TOKENS
    """Tokens billed for every model call of the run (the stub's ledger)."""
    cost_usd: float = 0.0
    """Those calls' price in dollars, at `price_model`."""
    extra_usage: TokenUsage = NO_TOKENS
    """Tokens of the calls the crash added (all but the first delivered answer of each turn)."""
    extra_cost_usd: float = 0.0
    """Their price in dollars: what the run paid beyond a clean run."""
    price_model: str = ""
    """The model whose prices the dollars are at (genai-prices' name)."""
    prices_as_of: str = ""
    """The price data's date, and the genai-prices release it comes with."""
    model_latency: float = 0.0
    """Seconds the stub's model took to answer each call."""
    recovery_s: float | None = None
    """Seconds from the agent listening again after the kill to the invocation's completion (the server's
    append time of its output); None without a kill or a completion."""
    retry_wait_s: float | None = None
    """Of recovery_s, the seconds until the server's next retry reached the agent (its retry timer)."""
    recovery_breakdown: RecoveryBreakdown | None = None
    """Where the rest of recovery_s went, and the time to regain what the kill lost; None without
    recovery_s and retry_wait_s."""
    bookings: int = 0
    """Requests to the stub's booking endpoint."""
    booking_effects: int = 0
    """Bookings those requests made (the endpoint's ledger: one per key, one per request without a key)."""
    idempotency_key: str = ""
    """How the run's agent keyed its booking ("none", "request-id", "uuid"); "" for an agent that books
    nothing."""
    node_kill: NodeKillRecord | None = None
    """For a run that killed a cluster node: which node, who took over, and the stall."""
    explicit_recovery: bool = False
    """The agent ran under restate-sdk's preview `explicit_recovery` (a retry replays nothing and executes
    every context operation again)."""
    retry_policy: str = ""
    """The agent's own retry policy, when the row set one ("" for the deck's)."""
    server_flags: tuple[str, ...] = ()
    """Experimental restate-server settings the row's own server ran with ("NAME=value"); none on the
    lab's shared server."""
    protocol_version: int | None = None
    """The service protocol version the invocation ran on (sys_invocation.pinned_service_protocol_version):
    6 by default on restate-server 1.7, 7 with RESTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7."""
    completion_result: str | None = None
    """sys_invocation.completion_result once completed: "success", or "failure" (an invocation the retry
    policy killed, or one that failed terminally)."""


@dataclass(frozen=True)
class CurvePoint:
    """One restart delay of a curve."""

    delay: float
    """Restart delay asked for."""
    down_time: float
    """Measured down time."""
    model_calls: int
    """Measured paid model calls."""
    predicted_model_calls: int | None
    """Paid calls predicted from the retry policy and the measured down time (None if ambiguous)."""
    predicted_range: tuple[int, int]
    """Fewest and most paid calls the policy allows for that down time, given Restate's jitter."""
    attempts_while_down: int
    """Measured attempts that found the agent down."""
    status: RecordedStatus
    """Final status."""
    invocation_id: str
    """The point's invocation."""
    usage: TokenUsage = NO_TOKENS
    """Tokens billed for the point's model calls."""
    cost_usd: float = 0.0
    """Their price in dollars."""
    extra_cost_usd: float = 0.0
    """The price of the calls the crash added."""
    max_attempts: int | None = None
    """For a retry-policy curve: the point's `max_attempts` (None on a restart-delay curve)."""
    on_max_attempts: str = ""
    """For a retry-policy curve: what Restate did once they were spent ("pause" or "kill")."""
    outcome: str = ""
    """How the invocation ended, read from sys_invocation: "paused", "succeeded" or "failed" (killed by
    the policy ends as a completed invocation with a failure)."""

    @property
    def agrees(self) -> bool:
        """The measured paid calls lie in the predicted range (equal the prediction when it is exact).

        The range is wider than one count only when the measured down time falls where Restate's jitter alone
        decides whether one more retry lands before the agent is back.
        """
        low, high = self.predicted_range
        return low <= self.model_calls <= high


@dataclass(frozen=True)
class CurveRecord:
    """A restart-delay curve."""

    name: str
    """Curve name."""
    points: tuple[CurvePoint, ...]
    """One point per delay."""
    deck_model_calls: tuple[int, ...]
    """The deck's paid calls at each delay."""
    matches: bool
    """Every measurement lies in its predicted range, and the deck's figures agree."""
    runs: tuple[RunRecord, ...]
    """The full record of each point's run."""
    varies: str = "restart delay"
    """The curve's x axis: "restart delay" or "max attempts" (the retry policy varies, the delay fixed)."""


@dataclass(frozen=True)
class RecoveryStep:
    """One step of a recovery walk: an admin request and what followed it."""

    action: str
    """What was done ("resume on the fix", "restart-as-new while paused", ...)."""
    status: int
    """HTTP status the admin API answered."""
    answer: str
    """The admin API's answer."""
    outcome: str
    """What the invocation did next, as measured."""
    invocation_id: str
    """The invocation the step acted on or produced."""
    model_calls: int
    """Model calls the step cost (stub ledger)."""
    tool_calls: int
    """Tool executions the step cost."""
    usage: TokenUsage = NO_TOKENS
    """Tokens billed for those model calls (the stub's ledger)."""
    cost_usd: float = 0.0
    """Their price in dollars, at the walk's `price_model`."""


@dataclass(frozen=True)
class RecoveryRecord:
    """A recovery walk on a stuck invocation."""

    name: str
    """Walk name."""
    invocation_id: str
    """The stuck invocation."""
    fix_deployment: str
    """The deployment the fix was registered as."""
    predicted_mismatch_at: int | None
    """Where `paidtwice recover` said, before the resume, that a resume onto the fix must mismatch."""
    steps: tuple[RecoveryStep, ...]
    """Each step, in order."""
    mismatch: Mismatch | None
    """The mismatch the resume on new code met, read against the journal."""
    admin_log: tuple[AdminCall, ...]
    """Every admin request of the walk, in order, with its status and answer."""
    checks: tuple[Check, ...]
    """The deck's statements against what was measured."""
    matches: bool
    """Every check agrees."""
    stuck_run: RunRecord
    """The run that left the invocation stuck."""
    usage: TokenUsage = NO_TOKENS
    """Tokens the walk's steps were billed, summed (the stuck run's own are in `stuck_run`)."""
    cost_usd: float = 0.0
    """Their price in dollars: what getting the invocation out cost, beyond what the stuck run paid."""
    price_model: str = ""
    """The model whose prices the dollars are at (genai-prices' name)."""
    prices_as_of: str = ""
    """The price data's date, and the genai-prices release it comes with."""


@dataclass(frozen=True)
class ComparisonRecord:
    """Two runs set side by side, and the difference between them."""

    name: str
    """Row name."""
    figure: str
    """What is compared: "recovery" or "booking effects"."""
    deck_says: str
    """What is claimed."""
    runs: tuple[RunRecord, ...]
    """The run without the remedy, then the run with it, then any further runs the row sets beside them."""
    difference: float | None
    """First minus second: seconds of recovery from the first replay that reached the restarted agent to
    completion, or booking effects (what the claim is checked on)."""
    checks: tuple[Check, ...]
    """The claim against what was measured, then each run's own checks."""
    matches: bool
    """Every check agrees."""
    recovery_difference_s: float | None = None
    """First minus second `recovery_s` (from the agent listening again), retry timer included."""
    regain_difference_s: float | None = None
    """First minus second `regain_s`: the time to regain the progress the kill lost, from the first attempt
    that reached the restarted agent (what a recovery claim is checked on)."""


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
    model_holds: tuple[int, ...] = ()
    """The model calls the stub holds open (their numbers within the invocation); all are in flight at the
    moment."""
    tool_hold: int | None = None
    """The stub tool call held open."""
    pause_op: int | None = None
    """The context operation (its number in the handler's step log) that is the durable pause."""
    begins: float = 0.0
    """When the moment began in the clean run (wall clock): a crash from then until the next point's
    moment lands at this point."""
    covers: float = 0.0
    """The share (0..1) of the clean run's time, from its first event to its output, that is this moment:
    the chance that a crash at a uniformly random moment of the run lands here."""
    hold_entries: int | None = None
    """A command's deployment: the protocol proxy holds the server's frame that brings the journal to this
    many entries (or the attempt that starts with them), so the agent waits there."""


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
    SweepTarget.mode)."""
    script: str
    """Stub script (steady, drifting, changed)."""
    status: str
    """Final status: completed, paused, stuck (a journal mismatch on every retry; killed by the sweep) or
    unanswered (the replay made a model call no turn of the script answers; killed by the sweep)."""
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

    @property
    def pays_twice(self) -> bool:
        """Paid again for work that had completed: an answer asked for again, model calls or steps beyond
        those cut off in flight."""
        return (
            self.answers_asked_again > 0
            or self.extra_model_calls > self.model_calls_in_flight
            or self.extra_step_runs > self.steps_in_flight
        )

    def shorter_path(self, clean: CleanRun) -> str | None:
        """How the replay that completed took a shorter path than the clean run's, in words; None if it did
        not (a replay that ended paused or stuck did not finish any path)."""
        if self.status != "completed" or (self.extra_model_calls >= 0 and self.extra_step_runs >= 0):
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
    """Seconds the matrix took (points ran concurrently with every other point of the sweep)."""

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
        steps_kept = sum(1 for p in self.points if p.extra_step_runs <= p.steps_in_flight)
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


def to_jsonable(value: Any) -> Any:
    """Plain JSON types from records (dataclasses, tuples, nested)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return value


RESULTS_FORMAT = 2
"""Version of the JSON results paidtwice writes: each record carries it as "format", beside what it is as
"record" (run, curve, walk, sweep-point).
Format 1 (no "format" field) had no times on model-call ends, attempt ends, the kill or journal entries."""

_KINDS = {
    "RunRecord": "run",
    "CurveRecord": "curve",
    "RecoveryRecord": "walk",
    "ComparisonRecord": "comparison",
}


def tagged(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """A record's JSON with the results format and its kind first, so a reader knows what it holds."""
    return {"format": RESULTS_FORMAT, "record": kind, **data}


def _journal_json(record: Any) -> Any:
    data = to_jsonable(record)
    if isinstance(record, RunRecord):
        # The figures a row leaves open are left out, not written as null.
        data["expected"] = {k: v for k, v in data["expected"].items() if v is not None}
    if isinstance(record, CurveRecord):
        data["runs"] = [_journal_json(run) for run in record.runs]
    if isinstance(record, RecoveryRecord):
        data["stuck_run"] = _journal_json(record.stuck_run)
    if isinstance(record, ComparisonRecord):
        data["runs"] = [_journal_json(run) for run in record.runs]
    return tagged(_KINDS[type(record).__name__], data)


Record = RunRecord | CurveRecord | RecoveryRecord | ComparisonRecord
"""Any record a deck row produces."""


def write_records(path: Path, records: Sequence[Record]) -> None:
    """Write the records as a JSON list, atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps([_journal_json(r) for r in records], indent=2) + "\n")
    with tmp.open("rb") as handle:
        os.fsync(handle.fileno())
    tmp.replace(path)


def append_record(path: Path, records: list[Record], record: Record) -> None:
    """Add a finished record and rewrite the file before anything else runs."""
    records.append(record)
    write_records(path, records)
