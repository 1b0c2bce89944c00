"""How hard a soak pushes, as one frozen object built once (by the CLI, or by a user of the library) and
passed down: how many invocations, how many kills of the agent and of the cluster's nodes and how far
apart, how long it waits for them to settle."""

from __future__ import annotations

from dataclasses import dataclass

from paidtwice._exceptions import UsageError

__all__ = ["WAVE_MIN", "SoakOptions", "soak_timeout"]

WAVE_MIN = 20
"""The fewest invocations a node kill's wave may have: the node killed leads at least 2 of the cluster's 4
partitions, so each invocation lands on one of them about one time in two, and a wave of 20 misses them all
about once in a million soaks."""


def soak_timeout(invocations: int, node_kills: int = 0) -> float:
    """The default deadline: a minute, plus a tenth of a second per invocation (10 completed/s at least), plus
    a minute per node kill (the cluster settles after each before the next wave is sent)."""
    return 60.0 + 0.1 * invocations + 60.0 * node_kills


@dataclass(frozen=True)
class SoakOptions:
    """What a soak does: send `invocations` to one journaled agent and kill it `kills` times while they run;
    then, on a cluster, kill `node_kills` nodes one after the other, each started again before the next.
    With node kills the invocations go in one wave per node kill, each sent just before its kill."""

    invocations: int = 200
    """Invocations sent (besides the clean one measured first)."""
    kills: int = 5
    """Times the agent is killed (SIGKILL) and restarted while they run."""
    kill_every: float = 0.7
    """Seconds the agent runs between kills (and before each node kill)."""
    restart_delay: float = 0.3
    """Seconds the agent, or a node, stays down after its kill."""
    node_kills: int = 0
    """On a cluster: nodes killed and restarted, one at a time, after the agent's kills."""
    timeout: float | None = None
    """Seconds to wait for every invocation to settle; None: `soak_timeout(invocations, node_kills)`."""
    stall: float = 120.0
    """Give up early when no invocation settled for this many seconds."""
    progress_every: float = 1.0
    """Seconds between two progress reports."""

    @property
    def deadline(self) -> float:
        """Seconds the soak waits, from the first send, for every invocation to settle."""
        return soak_timeout(self.invocations, self.node_kills) if self.timeout is None else self.timeout

    def check(self, *, cluster: int) -> None:
        """Refuse, in one line (`UsageError`) and before anything starts, a soak that cannot do what it is
        asked on a server of `cluster` nodes (1: a single server)."""
        if self.invocations < 1 or self.kills < 0 or self.node_kills < 0:
            raise UsageError("a soak needs at least one invocation and a non-negative number of kills")
        if self.node_kills and cluster == 1:
            raise UsageError("--node-kills needs a cluster: add --cluster 3")
        least = WAVE_MIN * self.node_kills
        if self.node_kills and self.invocations < least:
            raise UsageError(
                f"--node-kills {self.node_kills} needs at least {least} invocations, not {self.invocations}: "
                f"each node kill lands on a wave of {WAVE_MIN} or more sent just before it"
            )

    def waves(self) -> tuple[int, ...]:
        """How many invocations each wave sends: one wave, or one per node kill (the first takes the rest)."""
        count = max(1, self.node_kills)
        waves = [self.invocations // count] * count
        waves[0] += self.invocations - sum(waves)
        return tuple(waves)
