"""The deck's runs, as data: one row per run, read like the deck's table.

Each row names the agent's mode, the stub's script, the fault and when it lands, the restart delay, and what
the deck reports. The runner executes any row; adding an experiment is adding a row here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from paidtwice._exceptions import NotFound
from paidtwice._words import count
from paidtwice.agent import CLEAN_JOURNALED_JOURNAL, CLEAN_NAIVE_JOURNAL, DECK_AGENT, AgentMode
from paidtwice.deck._faults import (
    Fault,
    KillInPause,
    KillMidBooking,
    KillMidCall,
    NodeKillInPause,
    NoFault,
    PauseMidCall,
    ServerKillInPause,
)
from paidtwice.deck._policy import SERVER_RETRY_POLICY, RetryPolicy, ServerRetryPolicy
from paidtwice.engine import InvocationStatus
from paidtwice.lab import DEFAULT_RESTART_DELAY
from paidtwice.results import Expected, RecordedStatus
from paidtwice.stub import Hold

__all__ = [
    "COMPARISONS",
    "CURVES",
    "EXPERIMENTS",
    "SCENARIOS",
    "SERVER_RETRY_POLICY",
    "WALKS",
    "Comparison",
    "Curve",
    "Expected",
    "Experiment",
    "Fault",
    "InvocationStatus",
    "RecordedStatus",
    "RetryPolicy",
    "Row",
    "ServerRetryPolicy",
    "Walk",
    "experiment_by_name",
    "with_model_latency",
]


NO_FAULT = NoFault()
KILL_IN_PAUSE = KillInPause()


@dataclass(frozen=True)
class Experiment:
    """One run of the deck."""

    name: str
    """Name used on the command line."""
    mode: AgentMode
    """Agent mode: "naive" (model call outside the journal) or "journaled" (through ctx.run_typed)."""
    script: str
    """Stub script name."""
    fault: Fault
    """Where the kill lands."""
    deck_says: str
    """What the deck reports, in a line."""
    expected: Expected
    """The deck's figures."""
    hold: Hold | None = None
    """For script `hold`: which model call is held back, and for how long (a kill-mid-call fault holds it on
    until its kill; the length is then the answer's generation time, of which a cut-off call is billed)."""
    restart_delay: float = DEFAULT_RESTART_DELAY
    """Seconds between the kill and the agent's port opening again."""
    section: str = "lab"
    """Which part of the deck the run belongs to."""
    model_down: bool = False
    """Start with the model endpoint down (the stub's `fail` script answers its turn with HTTP 500)."""
    model_latency: float = 0.0
    """Seconds the stub's model takes to answer each call."""
    agent: str = DECK_AGENT
    """The agent's app (MODULE:APP)."""
    booking_key: str = ""
    """For the booking agent: how it keys its booking ("none", "request-id" or "uuid")."""
    booking_seconds: float = 0.0
    """Seconds the stub's booking endpoint takes to confirm a booking."""
    step_log: bool = False
    """Have the agent host log the handler's steps, to time how long the recovery took to regain what the
    kill lost (`RecoveryBreakdown.regain_s`). Off where not needed: it instruments every HTTP client the host
    finds, and that costs CPU beside the kill."""
    explicit_recovery: bool = False
    """Run the agent's service under restate-sdk's preview `explicit_recovery`: a retry runs the handler from
    the start and executes every `ctx.run` again, replaying nothing."""
    retry_policy: RetryPolicy | ServerRetryPolicy | None = None
    """The agent's own retry policy; None: the deck's (20 attempts, 200 ms doubling to 2 s, then pause);
    SERVER_RETRY_POLICY: none of its own, the server's default."""
    booking_pause: float = 0.0
    """For the booking agent: seconds of a durable pause after the booking (a moment to kill it in)."""
    server_flags: tuple[tuple[str, str], ...] = ()
    """Experimental restate-server settings (env var, value) the row needs: set on a server of the row's own,
    never on the lab's shared one, and named in the record."""
    command: str = ""
    """The agent as a command (a deployment in another language, behind the lab's protocol proxy), started
    in `command_dir` with the deck agent's environment (PORT, OPENAI_BASE_URL, TOOLS_URL, AGENT_MODE,
    SERVICE, PAUSE_MS) and `command_env`; "" for a Python app (`agent`)."""
    command_dir: str = ""
    """The command's directory, from the repository's root."""
    command_env: tuple[tuple[str, str], ...] = ()
    """Further environment variables of the command (name, value)."""
    plans_recovery: bool = False
    """Once the run has paused, ask `recover` for its plan while the run's server is still up, and keep the
    ways out it offers in the record."""
    settles_within: float = 180.0
    """Seconds the lab waits for the invocation to complete or pause after the fault (the server's default
    retry policy takes about an hour to pause)."""


@dataclass(frozen=True)
class Curve:
    """A run repeated over several restart delays (the restart-delay curve)."""

    name: str
    """Name used on the command line."""
    base: Experiment
    """The run repeated at each delay."""
    delays: tuple[float, ...]
    """Restart delays, seconds. Each sits between the windows in which a retry can land, so the number of
    retries made while the agent is down is the same for any jitter."""
    deck_says: str
    """What the deck reports."""
    expected_model_calls: tuple[int, ...] = field(default=())
    """The deck's paid calls at each delay."""
    policies: tuple[RetryPolicy, ...] = ()
    """When set, the curve varies the agent's retry policy instead, at the base row's own restart delay (one
    point per policy, `delays` unused); each point is predicted from its policy and its restart delay."""

    @property
    def varies(self) -> str:
        """What the curve's x axis is: "restart delay" or "max attempts"."""
        return "max attempts" if self.policies else "restart delay"

    def points(self) -> tuple[tuple[Experiment, float | None], ...]:
        """Each point's run: the base row, and the restart delay it is run at (None: its own)."""
        if self.policies:
            return tuple((replace(self.base, retry_policy=policy), None) for policy in self.policies)
        return tuple((self.base, delay) for delay in self.delays)


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        name="clean",
        mode="naive",
        script="steady",
        fault=NO_FAULT,
        deck_says="2 model calls, 1 tool call; journal: input, run weather, its completion, "
        "sleep, its completion, output",
        expected=Expected("completed", 2, 1, journal=CLEAN_NAIVE_JOURNAL),
    ),
    Experiment(
        name="naive-kill-in-pause",
        mode="naive",
        script="steady",
        fault=KILL_IN_PAUSE,
        deck_says="3 model calls, 1 tool call; call 2 repeats call 1's answer word for word",
        expected=Expected("completed", 3, 1, journal=CLEAN_NAIVE_JOURNAL, repeated_answer=(1, 2)),
    ),
    Experiment(
        name="journaled-kill-in-pause",
        mode="journaled",
        script="drifting",
        fault=KILL_IN_PAUSE,
        deck_says="2 model calls, 1 tool call; model runs at journal entries 1 and 7",
        expected=Expected("completed", 2, 1, journal=CLEAN_JOURNALED_JOURNAL, model_entries=(1, 7)),
    ),
    Experiment(
        name="journaled-kill-mid-call",
        mode="journaled",
        script="hold",
        hold=Hold(call=1, seconds=3.0),
        fault=KillMidCall(call=1, after=1.0),
        deck_says="3 model calls, 1 tool call; same journal as a clean journaled run; "
        "call 1's answer never delivered",
        expected=Expected(
            "completed",
            3,
            1,
            journal=CLEAN_JOURNALED_JOURNAL,
            model_entries=(1, 7),
            undelivered=(1,),
        ),
    ),
    Experiment(
        name="server-kill-in-pause",
        mode="journaled",
        script="steady",
        fault=ServerKillInPause(),
        section="engine",
        deck_says="not in the deck: restate-server itself is killed in the pause and started again on "
        "its data; the journaled run completes with the clean counts and an intact journal",
        expected=Expected("completed", 2, 1, journal=CLEAN_JOURNALED_JOURNAL, model_entries=(1, 7)),
    ),
    Experiment(
        name="node-kill-in-pause",
        mode="journaled",
        script="steady",
        fault=NodeKillInPause(),
        section="cluster",
        deck_says="not in the deck: on a 3-node cluster, the node leading the invocation's partition is "
        "SIGKILLed in the pause; another node takes over and the journaled run completes with the clean "
        "counts and an intact journal",
        expected=Expected("completed", 2, 1, journal=CLEAN_JOURNALED_JOURNAL, model_entries=(1, 7)),
    ),
    Experiment(
        name="naive-flip",
        mode="naive",
        script="flip",
        fault=KILL_IN_PAUSE,
        section="mismatch",
        deck_says="one attempt fails with RT0016, the next completes; 4 model calls, 1 tool call",
        expected=Expected("completed", 4, 1, journal=CLEAN_NAIVE_JOURNAL, mismatches=1),
    ),
    Experiment(
        name="naive-changed-for-good",
        mode="naive",
        script="changed",
        fault=KILL_IN_PAUSE,
        section="mismatch",
        deck_says="every attempt after the restart fails with RT0016 (17); paused after 18 model "
        "calls; 1 tool call",
        expected=Expected("paused", 18, 1, mismatches=17, attempts=20, attempts_reached_agent=17),
    ),
    Experiment(
        name="explicit-recovery-kill-in-pause",
        mode="journaled",
        script="drifting",
        fault=KILL_IN_PAUSE,
        explicit_recovery=True,
        section="knobs",
        deck_says="not in the deck: the journaled agent under restate-sdk's preview explicit_recovery, "
        "killed in the pause: the retry replays nothing and runs the handler from the start, so the "
        "journaled model call and the tool are paid again: 3 model calls and 2 tool calls, beside the "
        "journaled replay's 2 and 1",
        expected=Expected("completed", 3, 2, mismatches=0),
    ),
)

EXPERIMENTS += (
    Experiment(
        name="operator-pause-mid-call",
        mode="journaled",
        script="hold",
        hold=Hold(call=1, seconds=3.0),
        fault=PauseMidCall(call=1, after=1.0),
        section="knobs",
        deck_says="not in the deck: the admin API's pause sent 1 s into the journaled agent's first model "
        "call (the stub answers at 3 s), then resume once paused. On restate-server 1.7.12 the attempt "
        "finishes the step in flight, its answer is journaled and delivered, and only then does the "
        "invocation pause: the resume replays it, and the call is paid once (2 model calls, as a clean run)",
        expected=Expected(
            "completed", 2, 1, journal=CLEAN_JOURNALED_JOURNAL, model_entries=(1, 7), undelivered=()
        ),
    ),
)

PROTOCOL_V7 = "RESTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7"
"""restate-server 1.7's opt-in for service protocol v7 (new clusters only)."""

CHANGED_FOR_GOOD = next(row for row in EXPERIMENTS if row.name == "naive-changed-for-good")
EXPLICIT_RECOVERY_KILL_IN_PAUSE = next(
    row for row in EXPERIMENTS if row.name == "explicit-recovery-kill-in-pause"
)

SCENARIOS: tuple[Experiment, ...] = (
    Experiment(
        name="journaled-model-down",
        mode="journaled",
        script="fail",
        fault=NO_FAULT,
        model_down=True,
        section="recover",
        deck_says="not in the deck: the model endpoint fails on the second turn, so the journaled agent "
        "pauses after 20 attempts with the first answer and the tool result recorded",
        expected=Expected("paused", 21, 1, attempts=20),
    ),
    Experiment(
        name="changed-for-good-protocol-v7",
        mode="naive",
        script="changed",
        fault=KILL_IN_PAUSE,
        section="knobs",
        retry_policy=RetryPolicy(20, "pause", initial_interval=0.1, max_interval=0.4),
        restart_delay=0.6,
        server_flags=((PROTOCOL_V7, "true"),),
        deck_says="not in the deck: naive-changed-for-good on a server of its own with protocol v7 on (an "
        "experimental flag of restate-server 1.7). Protocol v7 lets an SDK ask for a pause at a journal "
        "mismatch, but restate-sdk 1.3.0 never asks (its VM takes no such option), so the invocation still "
        "retries to the end of its policy: 18 paid calls and 17 RT0016, as on protocol 6",
        expected=Expected("paused", 18, 1, mismatches=17, attempts=20, attempts_reached_agent=17),
    ),
    replace(
        CHANGED_FOR_GOOD,
        name="naive-changed-default-policy",
        section="knobs",
        retry_policy=SERVER_RETRY_POLICY,
        settles_within=3 * 3600.0,
        deck_says="not in the deck: naive-changed-for-good with no retry policy of its own, so the server's "
        "default applies (on 1.7.12: 70 attempts, 500 ms doubling up to 60 s apart, then pause): one retry "
        "lost to the 1.25 s restart, every other one paid, for about an hour (bench/default_policy.py)",
        expected=Expected("paused", 69, 1, mismatches=68, attempts=70, attempts_reached_agent=68),
    ),
)
"""Runs beyond the deck, for the recovery tools and the knobs' evidence; `paidtwice run` knows them,
`paidtwice deck` does not."""

_FAST_RETRIES = {"initial_interval": 0.1, "max_interval": 0.4}
"""The retry-policy curve's backoff: 100 ms doubling to 400 ms, so 20 attempts take about 8 s, not the
deck's 33. With Restate's 30% jitter the second retry lands by 0.43 s and the third not before 0.74 s."""
_POLICY_RESTART_DELAY = 0.6
"""Down time of the retry-policy curve's runs: late in the gap between its second and third retries' windows
(a loaded server fires its retries late, never early), so two retries find the agent down whatever the
jitter."""
POLICY_ATTEMPTS = (1, 3, 5, 10, 20)
"""The retry-policy curve's `max_attempts`, each with `on_max_attempts` pause and kill."""

CURVES: tuple[Curve, ...] = (
    Curve(
        name="restart-delay-curve",
        base=CHANGED_FOR_GOOD,
        delays=(0.0, 0.5, 1.25, 2.7, 4.7, 6.9),
        deck_says="paid model calls fall as the restart delay grows: from 20 down to 15",
        expected_model_calls=(20, 19, 18, 17, 16, 15),
    ),
    Curve(
        name="retry-policy-curve",
        base=replace(CHANGED_FOR_GOOD, restart_delay=_POLICY_RESTART_DELAY),
        delays=(),
        policies=tuple(
            RetryPolicy(attempts, on, **_FAST_RETRIES)
            for attempts in POLICY_ATTEMPTS
            for on in ("pause", "kill")
        ),
        deck_says="not in the deck: the changed-for-good invocation's bill is a function of its retry "
        "policy: the first call plus one per retry that reaches the agent (max_attempts minus the 2 "
        f"retries lost to a {_POLICY_RESTART_DELAY:g} s restart), the same whether it then pauses "
        "(resumable, and billed again) or is killed (failed for good)",
        expected_model_calls=(1, 1, 1, 1, 3, 3, 8, 8, 18, 18),
    ),
)


@dataclass(frozen=True)
class Walk:
    """A recovery walk: get the stuck invocation of `base` out, step by step, as the deck does."""

    name: str
    """Name used on the command line."""
    base: Experiment
    """The run that leaves an invocation stuck."""
    fix_mode: AgentMode
    """Agent mode of the fix, deployed as a new deployment (never a force-overwrite)."""
    deck_says: str
    """What the deck reports."""
    mismatch_at: int
    """The journal entry (by entry index) at which the resumed replay mismatches, and recover predicts it
    will."""
    recorded: str
    """The journal's entry at that index ("run weather")."""
    attempted: str
    """What the fix's code attempts there instead ("run model")."""
    resume_status: int
    """HTTP status the admin API answers the resume onto the fix with."""
    restart_paused_status: int
    """HTTP status it answers restart-as-new with while the invocation is paused."""
    restart_model_calls: int
    """Model calls the restart-as-new after the kill pays, from a fresh journal."""
    restart_tool_calls: int
    """Tool runs it pays."""


WALKS: tuple[Walk, ...] = (
    Walk(
        name="recover-paused",
        base=CHANGED_FOR_GOOD,
        fix_mode="journaled",
        deck_says="resume on the fix is accepted, then fails with RT0016 at index 1; restart-as-new is "
        "refused while paused; kill, then restart-as-new completes with 2 model calls",
        mismatch_at=1,
        recorded="run weather",
        attempted="run model",
        resume_status=200,
        restart_paused_status=409,
        restart_model_calls=2,
        restart_tool_calls=1,
    ),
)


@dataclass(frozen=True)
class Comparison:
    """Two runs that differ in one thing, run at once, and the difference between them that is claimed."""

    name: str
    """Name used on the command line."""
    first: Experiment
    """The run without the remedy."""
    second: Experiment
    """The same run with it."""
    figure: str
    """What is compared: "recovery" (recovery time) or "booking effects"."""
    deck_says: str
    """What is claimed."""
    section: str = "beyond"
    """Which part of the deck the row belongs to."""
    also: tuple[Experiment, ...] = ()
    """Further runs set beside the two, run at the same time, each judged on its own figures."""

    def runs(self) -> tuple[Experiment, ...]:
        return (self.first, self.second, *self.also)


SLOW_MODEL_LATENCY = 3.0
"""Seconds a call takes in `slow-model-recovery`, a slow model's answer."""

_SLOW_RESTART_DELAY = 2.7
"""Down time in `slow-model-recovery`: longer than what is left of the 2 s pause at the kill, so the pause is
over when the agent listens again and neither recovery waits for it (the naive one would otherwise overlap
its extra model call with the journaled one's wait). It sits in a gap between retry windows (see CURVES).

The row is judged on the time to regain the progress the kill lost, not on the time to completion: after
that point both agents ask the model once more, but the journaled one then waits for the journal to take
the answer (a round trip to the server) and the naive one does not, so their completion times differ by one
model latency minus that round trip plus the naive agent's own per-call work, a few milliseconds either
side of the latency. Both are measured and reported (`RecoveryBreakdown`)."""


def _slow(mode: AgentMode) -> Experiment:
    return Experiment(
        name=f"slow-model-recovery-{mode}",
        mode=mode,
        script="steady",
        fault=KILL_IN_PAUSE,
        deck_says=f"{mode} agent, model answering in {SLOW_MODEL_LATENCY:g} s, killed in the pause",
        expected=Expected("completed", 3 if mode == "naive" else 2, 1),
        restart_delay=_SLOW_RESTART_DELAY,
        section="beyond",
        model_latency=SLOW_MODEL_LATENCY,
        step_log=True,
    )


def _booking(key: str, effects: int) -> Experiment:
    return Experiment(
        name=f"idempotent-tool-kill-mid-call-{key}",
        mode="journaled",
        script="steady",
        fault=KillMidBooking(call=1, after=1.0),
        deck_says=f"booking in ctx.run, key {key}, killed while the booking is in flight: "
        f"{count(effects, 'effect')}",
        expected=Expected("completed", 0, 0, booking_effects=effects),
        section="beyond",
        agent="paidtwice.agent.booking:app",
        booking_key=key,
        booking_seconds=3.0,
    )


_BOOKING_PAUSE = 3.0
"""Seconds of the booking agent's pause after its booking, in which the kill lands: longer than the weather
agent's 2 s, since nothing but the journal tells a kill that missed it (no model call follows it)."""


def _explicit_booking(key: str, effects: int) -> Experiment:
    return Experiment(
        name=f"explicit-recovery-changed-{key}",
        mode="journaled",
        script="steady",
        fault=KILL_IN_PAUSE,
        explicit_recovery=True,
        deck_says=f"booking in ctx.run under explicit_recovery, key {key}, killed in a pause after the "
        f"booking was journaled: {count(effects, 'effect')}",
        expected=Expected("completed", 0, 0, booking_effects=effects, mismatches=0),
        section="knobs",
        agent="paidtwice.agent.booking:app",
        booking_key=key,
        booking_pause=_BOOKING_PAUSE,
    )


_TS_RESTART_DELAY = 2.7
"""Down time of the TypeScript rows: Node loads the agent in about a second, so the 1.25 s of the Python rows
could end before the replacement listens (the server would find it down once more). 2.7 s sits in a gap
between the deck policy's retry windows (see CURVES): three retries find the agent down."""


def _ts_changed(on_mismatch: str, *, v7: bool, calls: int, status: InvocationStatus, says: str) -> Experiment:
    server = "protocol v7" if v7 else "the pinned server as it starts"
    return Experiment(
        name=f"ts-changed-{on_mismatch}{'-v7' if v7 else ''}",
        mode="naive",
        script="changed",
        fault=KILL_IN_PAUSE,
        restart_delay=_TS_RESTART_DELAY,
        section="knobs",
        command="node agent.ts",
        command_dir="examples/ts_agent",
        command_env=(("ON_JOURNAL_MISMATCH", on_mismatch),),
        server_flags=((PROTOCOL_V7, "true"),) if v7 else (),
        plans_recovery=on_mismatch == "pause",
        deck_says=f"the TypeScript agent, onJournalMismatchErrors {on_mismatch!r}, on {server}: {says}",
        # A run that retries to the end of its policy pays one call per retry the agent saw: how many find
        # it down depends on how long Node takes to load it, so that run is judged on the relation (see
        # `mismatch_behaviour_check`), 17 being its count at the nominal 2.7 s.
        expected=Expected(status, calls, 1, mismatches=calls - 1, attempts=20 if calls > 2 else None),
    )


_SHORT_DEFAULT = RetryPolicy(10, "pause", **_FAST_RETRIES)
"""The server-wide default the default-retry-policy row sets on a server of its own (the pinned one would
take an hour to pause), and the same policy the row's other run sets on its service."""

DEFAULT_POLICY_RUN = next(row for row in SCENARIOS if row.name == "naive-changed-default-policy")


def _default_policy_run(name: str, policy: RetryPolicy | ServerRetryPolicy, says: str) -> Experiment:
    flags = (
        (
            ("RESTATE_DEFAULT_RETRY_POLICY__MAX_ATTEMPTS", str(_SHORT_DEFAULT.max_attempts)),
            (
                "RESTATE_DEFAULT_RETRY_POLICY__INITIAL_INTERVAL",
                f"{_SHORT_DEFAULT.initial_interval * 1000:g}ms",
            ),
            ("RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL", f"{_SHORT_DEFAULT.max_interval * 1000:g}ms"),
            (
                "RESTATE_DEFAULT_RETRY_POLICY__EXPONENTIATION_FACTOR",
                f"{_SHORT_DEFAULT.exponentiation_factor:g}",
            ),
        )
        if isinstance(policy, ServerRetryPolicy)
        else ()
    )
    return replace(
        CHANGED_FOR_GOOD,
        name=name,
        section="knobs",
        retry_policy=policy,
        restart_delay=_POLICY_RESTART_DELAY,
        server_flags=flags,
        deck_says=says,
        expected=Expected("paused", 8, 1, mismatches=7, attempts=10),
    )


COMPARISONS: tuple[Comparison, ...] = (
    Comparison(
        name="slow-model-recovery",
        first=_slow("naive"),
        second=_slow("journaled"),
        figure="recovery",
        deck_says="a slow model adds its latency to every recovery: the naive agent takes longer than the "
        f"journaled one by at least one model latency ({SLOW_MODEL_LATENCY:g} s) to regain the progress lost "
        "at the kill (from each replay's first step; recovery to completion reported beside it)",
    ),
    Comparison(
        name="idempotent-tool-kill-mid-call",
        first=_booking("none", 2),
        second=_booking("request-id", 1),
        figure="booking effects",
        deck_says="a step that must not happen twice, killed in flight, runs again: 2 bookings without an "
        "idempotency key, 1 with a key stable across attempts (ctx.request().id and the step)",
    ),
    Comparison(
        name="explicit-recovery-changed",
        first=replace(
            EXPLICIT_RECOVERY_KILL_IN_PAUSE,
            name="explicit-recovery-changed-weather",
            script="changed",
            deck_says="the journaled agent under explicit_recovery, changed stub, killed in the pause",
            expected=Expected("completed", 2, 1, mismatches=0),
        ),
        second=_explicit_booking("none", 2),
        also=(_explicit_booking("request-id", 1),),
        figure="explicit recovery",
        section="knobs",
        deck_says="explicit_recovery ends the mismatch loop and repeats every effect. "
        "Under the changed stub the retry meets no RT0016: it takes the new answer's path (answers at once: "
        "2 model calls, the tool's first run left unused, where naive-changed-for-good pays 18 and pauses). "
        "A journaled booking is made again on the retry (2 effects without a key), once with a key stable "
        "across attempts (ctx.request().id)",
    ),
    Comparison(
        name="default-retry-policy",
        first=_default_policy_run(
            "default-retry-policy-server",
            SERVER_RETRY_POLICY,
            "naive-changed-for-good with no retry policy of its own, on a server whose default-retry-policy "
            f"is {_SHORT_DEFAULT.describe()}",
        ),
        second=_default_policy_run(
            "default-retry-policy-service", _SHORT_DEFAULT, "the same policy set on the agent's service"
        ),
        figure="server default",
        section="knobs",
        deck_says="a service that sets no retry policy runs under the server's default-retry-policy, read "
        "from the server (restate-server --dump-config), and pays what the retry-policy curve's model "
        "predicts for it: measured on a server whose default is shortened, beside the same policy set on the "
        "service. "
        "On the pinned server's own default (70 attempts, 500 ms doubling up to 60 s, then pause) the model "
        "predicts 69 paid calls and about an hour before the pause: a prediction the curve confirms at 1 to "
        "20 attempts; bench/default_policy.py measures it once, for real",
    ),
    Comparison(
        name="ts-changed-pause-on-mismatch",
        first=_ts_changed(
            "retry", v7=True, calls=17, status="paused", says="retried to the end of its policy"
        ),
        second=_ts_changed("pause", v7=True, calls=2, status="paused", says="paused at the first RT0016"),
        also=(
            _ts_changed(
                "pause", v7=False, calls=17, status="paused", says="the option is ignored (protocol 6)"
            ),
        ),
        figure="mismatch behaviour",
        section="knobs",
        deck_says="@restatedev/restate-sdk 1.17's onJournalMismatchErrors 'pause' stops the mismatch loop at "
        "the first RT0016: under the changed stub, killed in the pause, the TypeScript agent pays 2 model "
        "calls and pauses where 'retry' pays 17 (20 attempts, 3 lost to the restart). It needs protocol v7: "
        "restate-server 1.7.12 negotiates it only with RESTATE_EXPERIMENTAL_ENABLE_PROTOCOL_V7=true (on by "
        "default from 1.8.0); without it the option is ignored and the agent pays 17 as with 'retry'",
    ),
)
"""Rows beyond the deck that set two runs side by side."""

Row = Experiment | Curve | Walk | Comparison
"""Any row of the deck."""


def with_model_latency(row: Row, seconds: float) -> Row:
    """The row with the stub's model answering every call in `seconds` (each run of it, for a curve, a
    walk or a comparison)."""
    if isinstance(row, Experiment):
        return replace(row, model_latency=seconds)
    if isinstance(row, Curve | Walk):
        return replace(row, base=replace(row.base, model_latency=seconds))
    return replace(
        row,
        first=replace(row.first, model_latency=seconds),
        second=replace(row.second, model_latency=seconds),
    )


def experiment_by_name(name: str) -> Row:
    rows: tuple[Row, ...] = (*EXPERIMENTS, *SCENARIOS, *CURVES, *WALKS, *COMPARISONS)
    for row in rows:
        if row.name == name:
            return row
    known = ", ".join(row.name for row in rows)
    raise NotFound(f"no experiment named {name!r} (known: {known})")
