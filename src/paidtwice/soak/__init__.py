"""The soak (`paidtwice soak`): many journaled invocations at once, the agent killed while they run (and, on
a cluster, its nodes), nothing lost and the kills' cost bounded by what they cut off.

    from paidtwice.lab import Lab
    from paidtwice.soak import SoakOptions, soak

    with Lab() as lab:
        record = soak(lab, SoakOptions(invocations=1000, kills=10))

Its record (`paidtwice.results.SoakRecord`) is written through `paidtwice.results.RecordSink`.
"""

from paidtwice.soak._monitor import SoakProgress
from paidtwice.soak._options import SoakOptions, soak_timeout
from paidtwice.soak._run import SoakInterrupted, soak
from paidtwice.soak._subject import DECK, soak_target

__all__ = [
    "DECK",
    "SoakInterrupted",
    "SoakOptions",
    "SoakProgress",
    "soak",
    "soak_target",
    "soak_timeout",
]
