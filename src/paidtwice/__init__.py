"""paidtwice: count, explain and stop the model calls a Restate replay pays for twice.

from paidtwice import Lab, EXPERIMENTS
with Lab() as lab:
    record = lab.run(EXPERIMENTS[1])
    print(record.model_calls, [e.label() for e in record.journal])
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

__all__ = [
    "CURVES",
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
    "ProvisionError",
    "RunRecord",
    "ServerStartError",
    "ServerUnreachable",
    "UsageError",
    "explain",
    "read_mismatch",
]
