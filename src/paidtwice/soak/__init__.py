"""The soak: many journaled invocations at once, the agent killed while they run (and, on a cluster, its
nodes), nothing lost and the kills' cost bounded by what they cut off. `paidtwice soak` is its command."""

from paidtwice.soak._run import (
    SOAK_KIND,
    KillSnapshot,
    NodeKillLine,
    PeakMemory,
    SoakInterrupted,
    SoakProgress,
    SoakRecord,
    check_soak,
    soak,
    soak_target,
    soak_timeout,
    write_soak,
)

__all__ = [
    "SOAK_KIND",
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
