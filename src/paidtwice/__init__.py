"""paidtwice: count, explain and stop the model calls a Restate replay pays for twice.

from paidtwice import Lab, EXPERIMENTS
with Lab() as lab:
    record = lab.run(EXPERIMENTS[1])
    print(record.model_calls, [e.label() for e in record.journal])

from paidtwice import sweep
for matrix in sweep(modes=["journaled"], scripts=["steady"]):
    print([(p.crash_point, p.extra_model_calls) for p in matrix.points])
"""

from paidtwice._exceptions import (
    AdminError,
    ExperimentError,
    NotFound,
    PaidtwiceError,
    ProvisionError,
    ServerStartError,
    ServerUnreachable,
    UsageError,
)
from paidtwice._pins import RESTATE_SDK_VERSION, RESTATE_SERVER_VERSION
from paidtwice.lab import (
    CURVES,
    EXPERIMENTS,
    CurveRecord,
    Experiment,
    Lab,
    Mismatch,
    RunRecord,
    explain,
    read_mismatch,
)
from paidtwice.lab._sweep import CrashPoint, PointResult, SweepMatrix, sweep

__all__ = [
    "CURVES",
    "CrashPoint",
    "EXPERIMENTS",
    "RESTATE_SDK_VERSION",
    "RESTATE_SERVER_VERSION",
    "AdminError",
    "CurveRecord",
    "Experiment",
    "ExperimentError",
    "Lab",
    "Mismatch",
    "NotFound",
    "PaidtwiceError",
    "PointResult",
    "ProvisionError",
    "RunRecord",
    "ServerStartError",
    "ServerUnreachable",
    "SweepMatrix",
    "UsageError",
    "explain",
    "read_mismatch",
    "sweep",
]
