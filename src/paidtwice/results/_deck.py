"""What a run of the deck measured: typed records that travel from the runner to the reports and to JSON."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from paidtwice._words import entry_at
from paidtwice.engine import AdminCall, InvocationStatus, JournalEntry
from paidtwice.stub import NO_TOKENS, TokenUsage

__all__ = [
    "AttemptLine",
    "Check",
    "ComparisonRecord",
    "CurvePoint",
    "CurveRecord",
    "Expected",
    "Mismatch",
    "ModelLogLine",
    "NodeKillRecord",
    "Record",
    "RecordedStatus",
    "RecoveryBreakdown",
    "RecoveryRecord",
    "RecoveryStep",
    "RunRecord",
    "ToolLogLine",
]

RecordedStatus = InvocationStatus | Literal["unknown"]
"""An invocation's final status as a record keeps it: "unknown" when the server held no row for it."""


@dataclass(frozen=True)
class Expected:
    """What the deck reports for a run. None means the deck says nothing about that figure."""

    status: InvocationStatus
    """Restate's final status of the invocation."""
    model_calls: int
    """Model calls paid for, in all attempts."""
    tool_calls: int
    """Weather tool executions."""
    journal: tuple[str, ...] | None = None
    """The journal's entries by index ("Command: Run weather"), when the deck shows it."""
    model_entries: tuple[int, ...] | None = None
    """Journal indexes of the `model` run commands."""
    repeated_answer: tuple[int, int] | None = None
    """(a, b): model call b repeats call a's answer word for word."""
    undelivered: tuple[int, ...] | None = None
    """Model calls whose answer never reached the agent."""
    mismatches: int | None = None
    """Attempts that ended in a journal mismatch (RT0016)."""
    attempts: int | None = None
    """Attempts in all, counted against the retry policy."""
    attempts_reached_agent: int | None = None
    """Retries (attempts after the first) that reached a running agent."""
    booking_effects: int | None = None
    """Bookings the stub's booking endpoint made."""


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
    recover_offers: tuple[str, ...] = ()
    """For a paused run whose row asks: the ways out `paidtwice recover` planned for it while its server
    was up, each as "name: what it replays"."""


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
    """Paid calls predicted from the retry policy and the restart delay (None if ambiguous)."""
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

        The range is wider than one count only when the restart delay falls where Restate's jitter alone
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


Record = RunRecord | CurveRecord | RecoveryRecord | ComparisonRecord
"""Any record a deck row produces."""
