"""A soak's record (`SoakRecord`), with a `KillSnapshot` per agent kill, a `NodeKillLine` per node kill and
the `PeakMemory` of each process. Its kind is "soak" (`kinds()`), one record per file."""

from __future__ import annotations

from dataclasses import dataclass, field

from paidtwice.stub import NO_TOKENS, TokenUsage

__all__ = ["KillSnapshot", "NodeKillLine", "PeakMemory", "SoakRecord"]


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
