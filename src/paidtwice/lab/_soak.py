"""Load with faults: many journaled invocations at once, the agent killed and restarted while they run, and
on a cluster, its nodes killed and restarted one at a time.

Nothing may be lost, and journaling bounds what the kills cost. The bound is taken at each kill, from a
snapshot, apart from the count it bounds: a model call the dead agent made is paid again by the replay only
if its answer is not in the journal when the replacement starts, whether the call was still open at the
kill or its answer had come back but not reached the journal. The count it bounds is the stub's ledger at
the end, less the clean count per invocation, which is measured on a clean invocation before the soak.

On a cluster, the invocations go in one wave per node kill, each sent just before its kill (the first also
takes the agent's kills), so that every node kill lands while invocations run: a node killed and started
again takes a cluster more than ten seconds to settle from, and one wave sent at once had settled before a
second kill came.

A user's own app is soaked the same way (`target` a `AppTarget`): its service is renamed for the soak,
each invocation sent to its handler with its input (a Virtual Object or Workflow with a key of its own, so
the invocations do not queue behind one key), its model answered by a script. The host tags each model
request with its invocation, so the stub counts the app's calls per invocation with no change to its code.
Tool runs are the deck's idea (the stub's tool endpoints): for a user's app only model calls are counted.

Every figure scales with the work: the ledger is indexed by lane and invocation, the server is asked for
counts per status (one query) and, at each kill, for the Run entries of the invocations not completed before
it (one query), never for each invocation by id.
"""

from __future__ import annotations

import json
import resource
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from paidtwice._exceptions import ExperimentError, LabCancelled, PaidtwiceError, UsageError
from paidtwice.agent._env import ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, SERVICE_AS, STUB_API_KEY
from paidtwice.agent._process import AgentAttempt, AgentHost
from paidtwice.engine._cluster import PartitionLeader, RestateCluster
from paidtwice.engine._sql import SqlClient
from paidtwice.lab._bill import PRICES_AS_OF, bill, extra_calls
from paidtwice.lab._runner import DECK_AGENT, QUESTION, Lab, renamed_service
from paidtwice.lab._watch import epoch
from paidtwice.results import write_record
from paidtwice.stub._ledger import ModelCall
from paidtwice.stub._scripts import SCRIPTS, Answer, Script
from paidtwice.stub._server import Lane
from paidtwice.stub._usage import NO_TOKENS, TokenUsage
from paidtwice.sweep._runs import DEFAULT_KEY, NO_MODEL_CALL
from paidtwice.targets._host import AppTarget

__all__ = [
    "KillSnapshot",
    "NodeKillLine",
    "PeakMemory",
    "SoakInterrupted",
    "SoakProgress",
    "SoakRecord",
    "check_soak",
    "soak",
    "soak_target",
    "soak_timeout",
    "write_soak",
]

_SETTLED = ("completed", "paused")
_POLL = 0.5
_CLEAN_TIMEOUT = 120.0
_SENDERS = 32
_WAVE_MIN = 20
"""The fewest invocations a node kill's wave may have: the node killed leads at least 2 of the cluster's 4
partitions, so each invocation lands on one of them about one time in two, and a wave of 20 misses them all
about once in a million soaks."""


def soak_timeout(invocations: int, node_kills: int = 0) -> float:
    """The default deadline: a minute, plus a tenth of a second per invocation (10 completed/s at least), plus
    a minute per node kill (the cluster settles after each before the next wave is sent)."""
    return 60.0 + 0.1 * invocations + 60.0 * node_kills


def check_soak(*, invocations: int, kills: int, node_kills: int, cluster: int) -> None:
    """Refuse, in one line and before anything starts, a soak that cannot do what it is asked."""
    if invocations < 1 or kills < 0 or node_kills < 0:
        raise UsageError("a soak needs at least one invocation and a non-negative number of kills")
    if node_kills and cluster == 1:
        raise UsageError("--node-kills needs a cluster: add --cluster 3")
    if node_kills and invocations < _WAVE_MIN * node_kills:
        raise UsageError(
            f"--node-kills {node_kills} needs at least {_WAVE_MIN * node_kills} invocations, not "
            f"{invocations}: each node kill lands on a wave of {_WAVE_MIN} or more sent just before it"
        )


def _waves(invocations: int, node_kills: int) -> list[int]:
    """How many invocations each wave sends: one wave, or one per node kill (the first takes the rest)."""
    count = max(1, node_kills)
    waves = [invocations // count] * count
    waves[0] += invocations - sum(waves)
    return waves


class SoakInterrupted(LabCancelled):
    """Ctrl-C or SIGTERM stopped a soak: `record` says what it measured until then (its `gave_up` says
    "interrupted", and the invocations still running count as unfinished)."""

    def __init__(self, record: SoakRecord) -> None:
        super().__init__("interrupted")
        self.record = record
        """The soak's record as the server and the stub's ledger stood at the interruption."""


@dataclass(frozen=True)
class KillSnapshot:
    """What one kill cut off, read from the stub's ledger and the journal as they stood at the kill."""

    at: float
    """Wall-clock time the SIGKILL was sent."""
    down: float
    """Seconds from the kill until the replacement listened."""
    open_calls: int
    """Model calls the dead agent made that had not been answered at the kill (sent just before it and read
    by the stub after it included), whose answer the journal lacks."""
    unjournaled_answers: int
    """Model calls answered before the kill whose answer the journal lacks when the replacement starts."""
    invocations_lacking: int
    """Invocations whose journal lacked at least one of those answers: each replays and asks again."""
    running: int | None = None
    """Invocations created before the kill and not settled at it (the server's times, read at the end): 0
    means the kill came after every invocation had settled and tested nothing; None before it is read."""

    @property
    def bound(self) -> int:
        """The most this kill can cost in model calls."""
        return self.open_calls + self.unjournaled_answers


@dataclass(frozen=True)
class PeakMemory:
    """Peak resident memory (MiB) of each process, as the kernel kept it (VmHWM, ru_maxrss)."""

    server: float
    """restate-server, over its life so far; on a cluster, the largest node's (each node read while it ran,
    before a kill too)."""
    agent: float
    """The largest of the agent's processes (one per life), each read before its kill and at the end."""
    paidtwice: float
    """paidtwice itself (the lab, the stub and this soak), over its life so far."""


@dataclass(frozen=True)
class SoakProgress:
    """Where a soak stands, for a progress line."""

    sent: int
    """Invocations sent so far."""
    invocations: int
    """Invocations to send."""
    completed: int
    """Invocations completed so far."""
    kills: int
    """Kills done so far."""
    kills_planned: int
    """Kills to do."""
    elapsed: float
    """Seconds since the first send."""
    node_kills: int = 0
    """Cluster nodes killed so far."""
    node_kills_planned: int = 0
    """Cluster nodes to kill (0: not a cluster soak)."""

    @property
    def rate(self) -> float:
        """Completed invocations per second so far."""
        return self.completed / self.elapsed if self.elapsed > 0 else 0.0


@dataclass(frozen=True)
class NodeKillLine:
    """One node of the cluster killed during a soak."""

    node: str
    """The node killed ("node-2"): the one leading the most partitions, never the one killed last."""
    partitions: tuple[int, ...]
    """The partitions it led at the kill."""
    running: int
    """Invocations on those partitions created before the kill and not yet completed at it (their output
    journaled after it)."""
    cut_off: int
    """Model calls made in the attempts this kill cut off, whose answer never reached the journal: the most
    it can cost. An attempt is cut off by the leader's death, and again when leadership moves back to the
    node after its restart; the first attempt after it that reached the agent says when."""
    down: float
    """Seconds from the kill until the node answered again."""


@dataclass(frozen=True)
class SoakRecord:
    """What a soak measured."""

    sent: int
    """Invocations sent."""
    kills: int
    """Times the agent was killed and restarted."""
    completed: int
    """Invocations that completed successfully."""
    paused: int
    """Invocations that ended paused (their retries ran out)."""
    lost: int
    """Invocations the server holds no completed or paused result for: failed, or vanished (must be 0)."""
    unfinished: int
    """Invocations still running, backing off or waiting when the soak gave up (must be 0)."""
    gave_up: str | None
    """Why the soak stopped waiting before every invocation settled; None when every one did."""
    clean_model_calls: int
    """Model calls of one clean invocation, measured on the soak's agent before the soak."""
    clean_tool_runs: int
    """Tool runs of that clean invocation."""
    model_calls: int
    """Model calls of the soak's invocations, from the stub's ledger."""
    extra_model_calls: int
    """Model calls beyond the clean count times the invocations sent; an invocation that did not complete
    (failed, paused, still running when the soak gave up) counts only the calls it made beyond the clean
    count, not those it never made."""
    kill_snapshots: tuple[KillSnapshot, ...]
    """What each kill cut off, in order."""
    extra_tool_runs: int
    """Tool runs beyond the clean count, summed over the invocations that ran the tool more often."""
    wall_time: float
    """Seconds from the first send until every invocation settled (or the soak gave up)."""
    throughput: float
    """Completed invocations per second of wall time."""
    p50_completion: float | None
    """Median seconds from an invocation's creation to its completion (the server's times)."""
    p99_completion: float | None
    """99th percentile of the same."""
    peak_memory: PeakMemory
    """Peak resident memory per process."""
    usage: TokenUsage = NO_TOKENS
    """Tokens billed for every model call of the soak."""
    cost_usd: float = 0.0
    """Their price in dollars, at `price_model`."""
    extra_cost_usd: float = 0.0
    """The price of the calls the kills added (all but the first delivered answer of each turn of each
    invocation)."""
    price_model: str = ""
    """The model whose prices the dollars are at."""
    prices_as_of: str = ""
    """The price data's date."""
    node_kills: tuple[NodeKillLine, ...] = field(default=())
    """On a cluster: each node killed and restarted while the invocations ran, in order."""
    model_steps: tuple[str, ...] = field(default=())
    """The names of the journal's Run steps that hold a model answer, found on the clean invocation (each of
    its model calls answered into the next Run step to finish); empty when the agent journals none."""
    waves: tuple[int, ...] = field(default=())
    """With node kills, the invocations each wave sent, in order (the first before the agent's kills and the
    first node kill, each next one just before its node kill); empty when all were sent at once."""
    app: str = ""
    """The user's app soaked, as "MODULE:APP SERVICE/HANDLER"; "" for the deck's agent (or an app that
    stands in for it). A user's app has its model calls counted, not its tool runs: the tool counts stay 0."""

    @property
    def cut_off_by_node_kills(self) -> int:
        """Model calls the node kills cut off, summed: the most they can cost."""
        return sum(kill.cut_off for kill in self.node_kills)

    @property
    def bound(self) -> int:
        """The most the kills can cost in model calls: the sum of each agent kill's snapshot, and of what
        each node kill cut off."""
        return sum(snapshot.bound for snapshot in self.kill_snapshots) + self.cut_off_by_node_kills

    @property
    def ok(self) -> bool:
        """Every invocation completed, and the kills cost no more than they cut off."""
        return self.completed == self.sent and self.extra_model_calls <= self.bound

    def problems(self) -> list[str]:
        """What is wrong, one phrase each; empty when `ok`."""
        found = []
        if self.lost:
            found.append(f"{self.lost} lost (failed or vanished)")
        if self.unfinished:
            found.append(f"{self.unfinished} unfinished ({self.gave_up})")
        if self.paused:
            found.append(f"{self.paused} paused (retries ran out)")
        if self.extra_model_calls > self.bound:
            found.append(f"{self.extra_model_calls} extra model calls exceed the bound of {self.bound}")
        return found


def soak(
    lab: Lab,
    *,
    invocations: int = 200,
    kills: int = 5,
    kill_every: float = 0.7,
    restart_delay: float = 0.3,
    timeout: float | None = None,
    stall: float = 120.0,
    target: str | AppTarget = DECK_AGENT,
    app_dir: Path | None = None,
    script: Script | None = None,
    progress: Callable[[SoakProgress], None] | None = None,
    progress_every: float = 1.0,
    node_kills: int = 0,
) -> SoakRecord:
    """Send `invocations` at once to one journaled agent and kill it `kills` times while they run; then, on a
    cluster, kill `node_kills` nodes one after the other, each started again before the next. With node
    kills the invocations go in one wave per node kill, each sent just before its kill.

    `target` is the deck's agent, or "MODULE:APP" (from `app_dir`) of an app that reads the deck agent's
    environment, or a user's app as a `AppTarget` (its service, handler and input; see `soak_target`).
    The stub answers by `script` (default: the steady script the deck's agent is written for). A clean
    invocation whose calls never reach the stub, or that the script does not answer, raises a `UsageError`
    before the soak starts.

    The soak waits until every invocation completed or paused, for at most `timeout` seconds (default
    `soak_timeout(invocations, node_kills)`) and gives up early when none settled for `stall` seconds.
    `progress`, if given, is called about every `progress_every` seconds.
    """
    cluster = lab.server
    check_soak(
        invocations=invocations,
        kills=kills,
        node_kills=node_kills,
        cluster=len(cluster.nodes) if isinstance(cluster, RestateCluster) else 1,
    )
    deadline_s = soak_timeout(invocations, node_kills) if timeout is None else timeout
    own = target if isinstance(target, AppTarget) else None
    soak_id = lab.next_id()
    service = renamed_service(own.service if own is not None else "Agent", f"soak_{soak_id}")
    lane = lab.stub.open_lane(script or SCRIPTS["steady"], name=service.lower())
    extra_env: dict[str, str] = {}
    if own is not None:
        extra_env = {
            **dict(own.env),
            SERVICE_AS: f"{own.service}={service}",
            ANTHROPIC_BASE_URL: lane.anthropic_base_url,
            ANTHROPIC_API_KEY: STUB_API_KEY,
        }
    with lab.new_agent(
        mode="journaled",
        lane=lane,
        service=service,
        target=own.app if own is not None else str(target),
        cwd=Path(own.cwd) if own is not None and own.cwd else app_dir,
        extra_env=extra_env,
    ) as agent:
        agent.start()
        deployment = lab.admin.register_deployment(agent.uri)
        if own is not None and own.key is not None and service not in deployment.keyed:
            raise UsageError(
                f"--key goes with a Virtual Object or a Workflow; {own.service} is a plain service (no key)"
            )
        calling = _Calling(
            service=service,
            handler=own.handler if own is not None else "run",
            input=own.input if own is not None else QUESTION,
            key=(own.key or DEFAULT_KEY) if own is not None and service in deployment.keyed else None,
        )
        clean_id = _run_clean(lab, calling, agent, lane)
        clean_calls, clean_tools = len(lane.model_calls(clean_id)), len(lane.tool_runs(clean_id))
        if own is not None:
            clean_tools = 0  # tool runs are the deck's: a user's app has its model calls counted only
        model_steps = _model_steps(lab.sql, clean_id, lane.model_calls(clean_id))
        # A call's place among its invocation's answers is its script turn when the clean invocation's turns
        # are 1, 2, 3... in order (the deck's conversation turns); a user's script may answer several calls
        # with one turn, or match them out of order: then it is the call's order since the last restart.
        by_order = own is not None and [c.turn for c in lane.model_calls(clean_id)] != list(
            range(1, clean_calls + 1)
        )
        monitor = _Monitor(lab, service, agent, invocations, kills, node_kills, progress, progress_every)
        started = monitor.started = time.time()
        monitor.start()
        # Filled as the soak goes, so that an interrupted soak still says what it did.
        ids: list[str] = []
        snapshots: list[KillSnapshot] = []
        node_events: list[_NodeEvent] = []
        attempts: list[AgentAttempt] = []
        waves = _waves(invocations, node_kills)
        interrupted = False
        try:
            _send_all(lab, calling, waves[0], monitor, ids)
            _kill_repeatedly(
                lab,
                agent,
                lane,
                service,
                model_steps,
                kills,
                kill_every,
                restart_delay,
                monitor,
                snapshots,
                by_order=by_order,
            )
            for number in range(node_kills):
                assert isinstance(cluster, RestateCluster)
                if number:
                    _send_all(lab, calling, waves[number], monitor, ids)
                if lab.cancelled.wait(kill_every):
                    raise LabCancelled("interrupted")
                last = node_events[-1].node if node_events else None
                node_events.append(_kill_node(lab, cluster, restart_delay=restart_delay, avoid=last))
                monitor.killed_node()
            gave_up = monitor.wait_settled(invocations + 1, deadline_s, stall)
            attempts = agent.attempts() if node_events else []
        except (KeyboardInterrupt, LabCancelled):
            # Ctrl-C or SIGTERM: what was sent so far is read from the server (which still runs) before the
            # lab stops it, and handed back in `SoakInterrupted`.
            interrupted, gave_up = True, "interrupted"
        finally:
            wall = time.time() - started
            monitor.stop()
    record = _record(
        lab,
        service=service,
        lane=lane,
        ids=ids,
        started=started,
        wall=wall,
        gave_up=gave_up,
        clean=(clean_calls, clean_tools),
        model_steps=model_steps,
        snapshots=snapshots,
        node_events=node_events if not interrupted else [],
        attempts=attempts,
        waves=tuple(waves) if node_kills else (),
        memory=monitor.peak_memory(),
        app=f"{own.app} {own.service}/{own.handler}" if own is not None else "",
    )
    if interrupted:
        raise SoakInterrupted(record)
    return record


def _record(
    lab: Lab,
    *,
    service: str,
    lane: Lane,
    ids: list[str],
    started: float,
    wall: float,
    gave_up: str | None,
    clean: tuple[int, int],
    model_steps: frozenset[str],
    snapshots: list[KillSnapshot],
    node_events: list[_NodeEvent],
    attempts: list[AgentAttempt],
    waves: tuple[int, ...],
    memory: PeakMemory,
    app: str,
) -> SoakRecord:
    """What the soak measured, read from the server's final state and the stub's ledger."""
    clean_calls, clean_tools = clean
    rows = _final_rows(lab.sql, service)
    mine = [rows[i] for i in ids if i in rows]
    completed = sum(1 for row in mine if row.status == "completed" and row.result == "success")
    paused = sum(1 for row in mine if row.status == "paused")
    unfinished = sum(1 for row in mine if row.status not in _SETTLED)
    durations = sorted(row.completed - row.created for row in mine if row.completed and row.created)
    if not gave_up and len(durations) == len(ids):
        # To the last completion as the server timed it, not to the poll that saw it.
        wall = max(row.completed or 0.0 for row in mine) - started
    per_invocation = {i: len(lane.model_calls(i)) for i in ids}
    calls = sum(per_invocation.values())
    # An invocation that did not complete (failed, paused, unfinished, vanished) may not have made all its
    # calls: it owes none of those it never made.
    short = {i for i in ids if i not in rows or rows[i].status != "completed" or rows[i].result != "success"}
    extra = sum(
        max(0, made - clean_calls) if i in short else made - clean_calls for i, made in per_invocation.items()
    )
    tool_runs = [len(lane.tool_runs(i)) for i in ids] if not app else []
    all_calls = [c for i in ids for c in lane.model_calls(i)]
    paid = bill(all_calls, lab.price_model)
    created = {i: rows[i].created for i in ids if i in rows}
    node_lines = (
        _node_kill_lines(lab.sql, ids, created, lane, attempts, node_events, model_steps)
        if node_events
        else ()
    )
    return SoakRecord(
        app=app,
        node_kills=node_lines,
        waves=waves,
        sent=len(ids),
        kills=len(snapshots),
        completed=completed,
        paused=paused,
        lost=len(ids) - completed - paused - unfinished,
        unfinished=unfinished,
        gave_up=gave_up if unfinished else None,
        clean_model_calls=clean_calls,
        clean_tool_runs=clean_tools,
        model_steps=tuple(sorted(model_steps)),
        model_calls=calls,
        extra_model_calls=extra,
        kill_snapshots=tuple(
            replace(
                snapshot,
                running=sum(
                    1
                    for row in mine
                    if (row.created or float("inf")) <= snapshot.at < (row.completed or float("inf"))
                ),
            )
            for snapshot in snapshots
        ),
        extra_tool_runs=sum(count - clean_tools for count in tool_runs if count > clean_tools),
        wall_time=round(wall, 3),
        throughput=round(completed / wall, 2) if wall > 0 else 0.0,
        p50_completion=_percentile(durations, 0.50),
        p99_completion=_percentile(durations, 0.99),
        peak_memory=memory,
        usage=paid.usage,
        cost_usd=paid.cost_usd,
        extra_cost_usd=bill(extra_calls(all_calls), lab.price_model).cost_usd,
        price_model=lab.price_model,
        prices_as_of=PRICES_AS_OF,
    )


def write_soak(path: Path, record: SoakRecord) -> None:
    """Write the record as JSON, atomically (a reader never sees half a file)."""
    write_record(path, record)


def soak_target(
    app: str, service: str, handler: str, input: Any, *, key: str | None = None, app_dir: Path | None = None
) -> AppTarget:
    """A user's app to soak, once it is seen to import and to serve `service`/`handler`
    (`AppTarget.checked`); `UsageError` in one line if it does not."""
    return AppTarget.checked(app, service, handler, input, key=key, app_dir=app_dir)


@dataclass(frozen=True)
class _Calling:
    """How each of the soak's invocations is sent."""

    service: str
    """The service as registered for this soak."""
    handler: str
    """The handler called."""
    input: Any
    """The JSON input of every invocation."""
    key: str | None
    """For a keyed service, the stem of each invocation's own key ("STEM-N"); None for a plain service."""

    def send(self, lab: Lab, n: int | str) -> str:
        """Send the invocation numbered `n`; its id."""
        key = f"{self.key}-{n}" if self.key is not None else None
        return lab.ingress.send(self.service, self.handler, self.input, key=key)


def _run_clean(lab: Lab, calling: _Calling, agent: AgentHost, lane: Lane) -> str:
    """Send one invocation and wait for it to complete with no fault: the clean counts are its counts. An
    invocation that fails before any model call reached the stub, or whose call the script does not answer,
    is a `UsageError`: the soak would count nothing, or only errors."""
    invocation = calling.send(lab, "clean")
    deadline = time.monotonic() + _CLEAN_TIMEOUT
    while True:
        row = lab.sql.invocation(invocation)
        calls = lane.model_calls(invocation)
        unanswered = [c for c in calls if c.unanswered]
        problem = None
        if unanswered:
            problem = f"{unanswered[0].answer.text} (model call {unanswered[0].call} of the clean invocation)"
        elif not calls and any(a.last_event == "error" for a in agent.attempts(invocation)):
            problem = NO_MODEL_CALL
        elif row is not None and row.status in _SETTLED:
            if row.status != "completed" or row.completion_result != "success":
                raise ExperimentError(f"the soak's clean invocation did not complete ({row.status})")
            if not calls:
                raise UsageError(NO_MODEL_CALL)
            return invocation
        if problem is not None:
            lab.admin.kill(invocation)
            raise UsageError(problem)
        if time.monotonic() > deadline:
            raise ExperimentError(f"the soak's clean invocation did not settle in {_CLEAN_TIMEOUT:.0f}s")
        if lab.cancelled.wait(0.05):
            raise LabCancelled("interrupted")


def _send_all(lab: Lab, calling: _Calling, invocations: int, monitor: _Monitor, ids: list[str]) -> None:
    """Send `invocations`, adding each one's id to `ids` once the server has it."""
    lock = threading.Lock()
    first = len(ids)  # the waves go one after the other: each invocation's number (and key) is its own

    def send(n: int) -> None:
        if lab.cancelled.is_set():
            raise LabCancelled("interrupted")
        invocation = calling.send(lab, first + n)
        with lock:
            ids.append(invocation)
        monitor.sent_one()

    # The server answers a send once it is in its log, which it writes in batches: more sends in flight fill
    # each batch (8 at a time sent 17 a second at a load average of 27 here).
    pool = ThreadPoolExecutor(max_workers=_SENDERS, thread_name_prefix="paidtwice-soak-send")
    try:
        list(pool.map(send, range(invocations)))
    finally:
        # On Ctrl-C the sends not yet started are dropped, not made while the lab waits.
        pool.shutdown(wait=True, cancel_futures=True)


def _kill_repeatedly(
    lab: Lab,
    agent: AgentHost,
    lane: Lane,
    service: str,
    model_steps: frozenset[str],
    kills: int,
    kill_every: float,
    restart_delay: float,
    monitor: _Monitor,
    snapshots: list[KillSnapshot],
    *,
    by_order: bool = False,
) -> None:
    """Kill the agent `kills` times, adding each kill's snapshot to `snapshots`. `by_order`: a call's place
    among its invocation's answers is the answers journaled when its agent life began plus its order in
    that life (a journaled agent's replay asks only for what its journal lacks), not its script turn."""
    alive_since = monitor.started
    journaled_at_start: dict[str, int | None] = {}
    for _ in range(kills):
        agent.prepare()
        agent.wait_ready()
        if lab.cancelled.wait(kill_every):
            raise LabCancelled("interrupted")
        monitor.sample_memory()
        killed_at = agent.kill()
        if lab.cancelled.wait(restart_delay):
            raise LabCancelled("interrupted")
        back_at = agent.go()
        monitor.killed_one()
        # Read after the replacement is up, so the down time stays the restart delay; the snapshot is of the
        # ledger and the journal as they stood before it listened (by their own timestamps).
        answers = _journaled_model_answers(
            lab.sql, service, model_steps, completed_after=killed_at, before=back_at
        )
        dead_life = [call for call in lane.model_calls() if alive_since <= call.started < back_at]
        places = _places_in_life(dead_life, journaled_at_start) if by_order else None
        snapshots.append(_snapshot(dead_life, answers, killed_at, back_at, places))
        alive_since, journaled_at_start = back_at, answers


def _places_in_life(calls: list[ModelCall], journaled_at_start: dict[str, int | None]) -> list[int]:
    """Each call's place among its invocation's model answers: those journaled when the life began, plus
    its order among the invocation's calls in this life."""
    seen: dict[str, int] = {}
    places = []
    for call in calls:
        seen[call.invocation_id] = seen.get(call.invocation_id, 0) + 1
        places.append((journaled_at_start.get(call.invocation_id) or 0) + seen[call.invocation_id])
    return places


def _snapshot(
    calls: list[ModelCall],
    answers: dict[str, int | None],
    killed_at: float,
    back_at: float,
    places: list[int] | None = None,
) -> KillSnapshot:
    """Of the calls one agent life made, those whose place (their turn, unless `places` are given, one per
    call) the journal had not answered."""
    turns = places if places is not None else [call.turn for call in calls]
    lacking = [call for call, turn in zip(calls, turns, strict=True) if _lacks(answers, call, turn)]
    answered = [c for c in lacking if c.finished is not None and c.finished <= killed_at and c.delivered]
    return KillSnapshot(
        at=killed_at,
        down=round(back_at - killed_at, 3),
        open_calls=len(lacking) - len(answered),
        unjournaled_answers=len(answered),
        invocations_lacking=len({call.invocation_id for call in lacking}),
    )


def _lacks(answers: dict[str, int | None], call: ModelCall, turn: int) -> bool:
    """The journal lacked this call's answer when the replacement started (turn N: the N-th model answer)."""
    if call.invocation_id not in answers:
        return True
    journaled = answers[call.invocation_id]
    return journaled is not None and journaled < turn


def _model_steps(sql: SqlClient, invocation: str, calls: list[ModelCall]) -> frozenset[str]:
    """The names of the Run steps the agent journals its model answers in, read from one clean invocation:
    those whose result holds what the stub answered one of its model calls (the tool asked for, or the
    words). Whatever the agent names them; empty when it journals no answer (a naive agent's next step,
    the tool's, holds the weather, not the model's words)."""
    markers = {_marker(call.answer) for call in calls} - {""}
    rows = sql.query(
        "SELECT index, entry_type, name, raw FROM sys_journal "
        f"WHERE id = '{invocation}' AND entry_type IN ('Command: Run', 'Notification: Run') ORDER BY index"
    )
    pending: list[str] = []
    names: set[str] = set()
    for row in rows:
        if row["entry_type"] == "Command: Run":
            pending.append(str(row.get("name") or ""))
        elif pending:
            name = pending.pop(0)
            try:
                result = bytes.fromhex(str(row.get("raw") or ""))
            except ValueError:
                continue
            if any(form in result for marker in markers for form in _encodings(marker)):
                names.add(name)
    return frozenset(names)


def _marker(answer: Answer) -> str:
    """What a journaled answer must hold: the tool the model asked for, else its words."""
    return answer.tool_call.name if answer.tool_call is not None else answer.text


def _encodings(text: str) -> tuple[bytes, bytes]:
    """The text as it reads in a JSON-serialized result: raw UTF-8, or escaped as json.dumps escapes it."""
    return text.encode(), json.dumps(text)[1:-1].encode()


def _journaled_model_answers(
    sql: SqlClient, service: str, model_steps: frozenset[str], *, completed_after: float, before: float
) -> dict[str, int | None]:
    """Model answers each invocation's journal held at `before`; None for an invocation that had completed
    by `completed_after`, whose every answer is in its journal.

    A model answer is a `Notification: Run` completing a `Command: Run` of `model_steps`. The soak's agents
    await each step before the next, so a journal's Run results follow its Run commands in order.
    """
    since = datetime.fromtimestamp(completed_after, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    done_before = f"target_service_name = '{service}' AND status = 'completed' AND completed_at < '{since}'"
    answers: dict[str, int | None] = {
        str(row["id"]): None for row in sql.query(f"SELECT id FROM sys_invocation WHERE {done_before}")
    }
    rows = sql.query(
        "SELECT id, entry_type, name, appended_at FROM sys_journal WHERE id IN ("
        f"SELECT id FROM sys_invocation WHERE target_service_name = '{service}' AND NOT ({done_before})) "
        "AND entry_type IN ('Command: Run', 'Notification: Run') ORDER BY id, index"
    )
    steps: dict[str, list[str]] = {}
    for row in rows:
        invocation = str(row["id"])
        if invocation in answers and answers[invocation] is None:
            continue
        if (epoch(row.get("appended_at")) or 0.0) >= before:
            continue
        pending = steps.setdefault(invocation, [])
        if row["entry_type"] == "Command: Run":
            pending.append(str(row.get("name") or ""))
        elif pending and pending.pop(0) in model_steps:
            answers[invocation] = (answers.get(invocation) or 0) + 1
    return answers


@dataclass(frozen=True)
class _Final:
    """One invocation's row in sys_invocation at the end."""

    status: str
    """Its status."""
    result: str
    """"success" or "failure" once completed, else ""."""
    created: float | None
    """When the server created it (epoch seconds)."""
    completed: float | None
    """When it completed, if it did."""


def _final_rows(sql: SqlClient, service: str) -> dict[str, _Final]:
    """Every invocation of the service, in one query."""
    rows = sql.query(
        "SELECT id, status, completion_result, created_at, completed_at FROM sys_invocation "
        f"WHERE target_service_name = '{service}'"
    )
    return {
        str(row["id"]): _Final(
            status=str(row.get("status", "")),
            result=str(row.get("completion_result") or ""),
            created=epoch(row.get("created_at")),
            completed=epoch(row.get("completed_at")),
        )
        for row in rows
    }


def _percentile(sorted_values: list[float], fraction: float) -> float | None:
    if not sorted_values:
        return None
    if len(sorted_values) == 1:
        return round(sorted_values[0], 3)
    cuts = statistics.quantiles(sorted_values, n=100, method="inclusive")
    return round(sorted_values[-1] if fraction >= 1 else cuts[round(fraction * 100) - 1], 3)


def _vm_hwm_mib(pid: int | None) -> float:
    """A live process's peak resident memory in MiB, from /proc; 0 if it is gone."""
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class _Monitor:
    """Counts the soak's invocations per status on the server (one query per poll), reports progress, and
    keeps the peak memory of the server and of each of the agent's lives."""

    def __init__(
        self,
        lab: Lab,
        service: str,
        agent: AgentHost,
        invocations: int,
        kills: int,
        node_kills: int,
        progress: Callable[[SoakProgress], None] | None,
        progress_every: float,
    ) -> None:
        self._lab, self._service, self._agent = lab, service, agent
        self._invocations, self._kills_planned, self._node_kills_planned = invocations, kills, node_kills
        self._progress, self._progress_every = progress, progress_every
        self.started = time.time()
        self._lock = threading.Lock()
        self._sent = 0
        self._kills = 0
        self._node_kills = 0
        self._counts: dict[str, int] = {}
        self._counted_at = 0.0
        self._agent_peak = 0.0
        self._server_peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="paidtwice-soak-monitor", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10.0)

    def sent_one(self) -> None:
        with self._lock:
            self._sent += 1

    def killed_one(self) -> None:
        with self._lock:
            self._kills += 1

    def killed_node(self) -> None:
        with self._lock:
            self._node_kills += 1

    def sample_memory(self) -> None:
        peak = _vm_hwm_mib(self._agent.pid)
        server = self._lab.server
        pids = (
            [node.process.pid for node in server.live_nodes() if node.process is not None]
            if isinstance(server, RestateCluster)
            else [server.pid]
        )
        server_peak = max((_vm_hwm_mib(pid) for pid in pids), default=0.0)
        with self._lock:
            self._agent_peak = max(self._agent_peak, peak)
            self._server_peak = max(self._server_peak, server_peak)

    def peak_memory(self) -> PeakMemory:
        self.sample_memory()
        return PeakMemory(
            server=round(self._server_peak, 1),
            agent=round(self._agent_peak, 1),
            paidtwice=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        )

    def _count(self) -> None:
        rows = self._lab.sql.query(
            "SELECT status, count(*) AS n FROM sys_invocation "
            f"WHERE target_service_name = '{self._service}' GROUP BY status"
        )
        counts = {str(row["status"]): int(row["n"]) for row in rows}
        with self._lock:
            self._counts, self._counted_at = counts, time.time()

    def settled(self) -> tuple[int, int, float]:
        """Invocations settled and in all (the clean one included), and when they were counted."""
        with self._lock:
            counts, at = self._counts, self._counted_at
        return sum(counts.get(status, 0) for status in _SETTLED), sum(counts.values()), at

    def _report(self) -> None:
        if self._progress is None:
            return
        with self._lock:
            completed = max(0, self._counts.get("completed", 0) - 1)  # less the clean invocation
            snapshot = SoakProgress(
                sent=self._sent,
                invocations=self._invocations,
                completed=completed,
                kills=self._kills,
                kills_planned=self._kills_planned,
                elapsed=time.time() - self.started,
                node_kills=self._node_kills,
                node_kills_planned=self._node_kills_planned,
            )
        self._progress(snapshot)

    def _loop(self) -> None:
        reported = 0.0
        while not self._stop.is_set():
            try:
                self._count()
            except PaidtwiceError:
                pass
            self.sample_memory()
            if time.monotonic() - reported >= self._progress_every:
                reported = time.monotonic()
                self._report()
            self._stop.wait(_POLL)
        self._report()

    def wait_settled(self, expected: int, deadline_s: float, stall: float) -> str | None:
        """Wait until all `expected` invocations are settled; returns why it gave up, or None."""
        deadline = self.started + deadline_s
        last_settled, last_change = -1, time.time()
        while True:
            settled, total, counted_at = self.settled()
            if counted_at > 0 and total >= expected and settled >= total:
                return None
            now = time.time()
            if settled != last_settled:
                last_settled, last_change = settled, now
            if now > deadline:
                return f"the deadline of {deadline_s:.0f}s passed"
            if now - last_change > stall:
                return f"no invocation settled in {stall:.0f}s"
            if self._lab.cancelled.wait(_POLL / 2):
                raise LabCancelled("interrupted")


@dataclass(frozen=True)
class _NodeEvent:
    node: str
    led: tuple[PartitionLeader, ...]
    killed_at: float
    back_at: float


def _kill_node(lab: Lab, cluster: RestateCluster, *, restart_delay: float, avoid: str | None) -> _NodeEvent:
    """SIGKILL the node leading the most partitions (never the one killed last), keep it down for
    `restart_delay`, start it again on its data, and wait until the cluster has settled."""
    leaders = cluster.leaders()
    counts = {node.name: sum(1 for p in leaders if p.leader == node.name) for node in cluster.nodes}
    victim = max((name for name in counts if name != avoid), key=lambda name: counts[name])
    killed_at = cluster.kill_node(victim)
    if lab.cancelled.wait(restart_delay):
        raise LabCancelled("interrupted")
    cluster.start_node(victim)
    back_at = time.time()
    cluster.wait_healthy()
    led = tuple(p for p in leaders if p.leader == victim)
    return _NodeEvent(victim, led, killed_at, back_at)


def _node_kill_lines(
    sql: SqlClient,
    ids: list[str],
    created: dict[str, float | None],
    lane: Lane,
    attempts: list[AgentAttempt],
    events: list[_NodeEvent],
    model_steps: frozenset[str],
) -> tuple[NodeKillLine, ...]:
    """Each node kill's figures, read once everything has settled, from the final journals' append times,
    the stub's ledger and the agent host's wire log.

    The node kills come after the agent's own kills, so only attempts served by the agent's last process
    count here. Such an attempt that ended without its last frame was cut off by the cluster; it is put
    to the kill whose window holds the start of the invocation's next attempt. Each model call belongs to
    the attempt that had started last when it was made, and was paid for in vain if no model answer was
    journaled between its start and the next call's (a journaled agent asks one question at a time)."""
    keys: dict[str, int] = {}
    answers: dict[str, list[float]] = {}
    outputs: dict[str, float] = {}
    for chunk in range(0, len(ids), 100):
        quoted = ", ".join(f"'{i}'" for i in ids[chunk : chunk + 100])
        for row in sql.query(f"SELECT id, partition_key FROM sys_invocation_status WHERE id IN ({quoted})"):
            keys[str(row["id"])] = int(row["partition_key"])
        open_steps: dict[str, list[str]] = {}
        for row in sql.query(
            "SELECT id, index, entry_type, name, appended_at FROM sys_journal "
            f"WHERE id IN ({quoted}) ORDER BY id, index"
        ):
            invocation = str(row["id"])
            at = epoch(row.get("appended_at")) or 0.0
            steps = open_steps.setdefault(invocation, [])
            if row["entry_type"] == "Command: Run":
                steps.append(str(row.get("name") or ""))
            elif row["entry_type"] == "Notification: Run" and steps and steps.pop(0) in model_steps:
                answers.setdefault(invocation, []).append(at)
            elif row["entry_type"] == "Command: Output":
                outputs[invocation] = at
    calls: dict[str, list[float]] = {}
    for call in lane.model_calls():
        calls.setdefault(call.invocation_id, []).append(call.started)
    last_pid = attempts[-1].pid if attempts else -1
    served: dict[str, list[AgentAttempt]] = {}
    for attempt in attempts:
        if attempt.pid == last_pid:
            served.setdefault(attempt.invocation_id, []).append(attempt)
    ends = [event.killed_at for event in events[1:]] + [float("inf")]
    cut_off = [0] * len(events)
    for invocation, its in served.items():
        starts = sorted(calls.get(invocation, []))
        for attempt, following in zip(its, its[1:], strict=False):
            if attempt.last_event is not None:
                continue
            window = next(
                (n for n, event in enumerate(events) if event.killed_at <= following.at < ends[n]), None
            )
            if window is None:
                continue
            for n, start in enumerate(starts):
                if not attempt.at <= start < following.at:
                    continue
                until = starts[n + 1] if n + 1 < len(starts) else float("inf")
                if not any(start <= at < until for at in answers.get(invocation, [])):
                    cut_off[window] += 1
    lines = []
    for event, count in zip(events, cut_off, strict=True):
        hit = [i for i in ids if any(p.first_key <= keys.get(i, -1) <= p.last_key for p in event.led)]
        lines.append(
            NodeKillLine(
                node=event.node,
                partitions=tuple(p.partition for p in event.led),
                running=sum(
                    1
                    for i in hit
                    if (created.get(i) or float("inf")) <= event.killed_at < outputs.get(i, float("inf"))
                ),
                cut_off=count,
                down=round(event.back_at - event.killed_at, 3),
            )
        )
    return tuple(lines)
