"""paidtwice: count, explain and stop the model calls a Restate replay pays for twice.

from paidtwice import Deck, Lab, EXPERIMENTS
with Lab() as lab:
    record = Deck(lab).run(EXPERIMENTS[1])
    print(record.model_calls, [e.label() for e in record.journal])

from paidtwice.sweep import Answers, sweep
from paidtwice.targets import TargetSpec
for matrix in sweep(TargetSpec(modes=("journaled",)), answers=Answers(variations=("steady",))):
    print([(p.crash_point, p.extra_model_calls) for p in matrix.points])
"""

from __future__ import annotations

import typing as _typing

from paidtwice import _lazy
from paidtwice._exceptions import (
    AdminError,
    ExperimentError,
    LabCancelled,
    NotFound,
    PaidtwiceError,
    ProvisionError,
    ScriptFileError,
    ServerStartError,
    ServerUnreachable,
    UnsatisfiableSchema,
    UsageError,
)
from paidtwice._pins import RESTATE_SDK_VERSION, RESTATE_SERVER_VERSION

if _typing.TYPE_CHECKING:
    from paidtwice.deck import CURVES, EXPERIMENTS, Deck, Experiment
    from paidtwice.lab import Lab
    from paidtwice.recover import explain, read_mismatch
    from paidtwice.results import CrashPoint, CurveRecord, Mismatch, PointResult, RunRecord, SweepMatrix

_LAZY = {
    **dict.fromkeys(
        ("CURVES", "EXPERIMENTS", "Deck", "Experiment"),
        "paidtwice.deck",
    ),
    "Lab": "paidtwice.lab",
    **dict.fromkeys(("explain", "read_mismatch"), "paidtwice.recover"),
    **dict.fromkeys(
        ("CrashPoint", "CurveRecord", "Mismatch", "PointResult", "RunRecord", "SweepMatrix"),
        "paidtwice.results",
    ),
}
"""The lab's names, imported when first used: an agent process imports `paidtwice.agent.host` and should not
pay for the lab, the stub and the report it never runs."""

__all__ = [
    "CURVES",
    "EXPERIMENTS",
    "RESTATE_SDK_VERSION",
    "RESTATE_SERVER_VERSION",
    "AdminError",
    "CrashPoint",
    "CurveRecord",
    "Deck",
    "Experiment",
    "ExperimentError",
    "Lab",
    "LabCancelled",
    "Mismatch",
    "NotFound",
    "PaidtwiceError",
    "PointResult",
    "ProvisionError",
    "RunRecord",
    "ScriptFileError",
    "ServerStartError",
    "ServerUnreachable",
    "SweepMatrix",
    "UnsatisfiableSchema",
    "UsageError",
    "explain",
    "read_mismatch",
]


__getattr__ = _lazy.attributes(__name__, _LAZY)
