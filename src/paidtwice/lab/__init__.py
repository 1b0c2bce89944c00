"""The lab: experiment rows as data, faults, the runner and its records."""

import importlib as _importlib
import typing as _typing

from paidtwice._exceptions import LabCancelled
from paidtwice.lab._bill import DEFAULT_PRICE_MODEL, PRICES_AS_OF, Bill, bill, check_price_model, extra_calls
from paidtwice.lab._experiments import (
    CLEAN_JOURNALED_JOURNAL,
    CLEAN_NAIVE_JOURNAL,
    COMPARISONS,
    CURVES,
    DEFAULT_RESTART_DELAY,
    EXPERIMENTS,
    SCENARIOS,
    WALKS,
    AgentMode,
    Comparison,
    Curve,
    Expected,
    Experiment,
    Fault,
    FaultKind,
    InvocationStatus,
    RecordedStatus,
    Row,
    Walk,
    experiment_by_name,
)
from paidtwice.lab._mismatch import Explanation, explain, read_mismatch
from paidtwice.lab._policy import Backoff, PaidCallPrediction, predict_paid_calls
from paidtwice.lab._recover import ApplyResult, RecoveryPlan, WayOut, apply_way, plan_recovery
from paidtwice.lab._rows import run_rows
from paidtwice.lab._runner import Lab
from paidtwice.lab._walks import run_walk
from paidtwice.results import (
    AttemptLine,
    Check,
    CleanRun,
    ComparisonRecord,
    CrashKind,
    CrashPoint,
    CurvePoint,
    CurveRecord,
    Mismatch,
    ModelLogLine,
    NodeKillRecord,
    PointResult,
    RecoveryBreakdown,
    RecoveryRecord,
    RecoveryStep,
    RunRecord,
    SweepMatrix,
    ToolLogLine,
)

if _typing.TYPE_CHECKING:
    from paidtwice.lab._soak import (
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

_LAZY = {
    **dict.fromkeys(
        (
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
        ),
        "paidtwice.lab._soak",
    ),
}
"""The soak's names, imported when first used: it runs targets (`paidtwice.targets`), which are built on the
lab's runner. The sweep is its own package's (`paidtwice.sweep`), not re-exported here: lab -> sweep -> lab
was a cycle."""

__all__ = [
    "CLEAN_JOURNALED_JOURNAL",
    "CLEAN_NAIVE_JOURNAL",
    "COMPARISONS",
    "CURVES",
    "DEFAULT_PRICE_MODEL",
    "DEFAULT_RESTART_DELAY",
    "EXPERIMENTS",
    "PRICES_AS_OF",
    "SCENARIOS",
    "WALKS",
    "AgentMode",
    "ApplyResult",
    "AttemptLine",
    "Backoff",
    "Bill",
    "Check",
    "CleanRun",
    "Comparison",
    "ComparisonRecord",
    "CrashKind",
    "CrashPoint",
    "Curve",
    "CurvePoint",
    "CurveRecord",
    "Expected",
    "Experiment",
    "Explanation",
    "Fault",
    "FaultKind",
    "InvocationStatus",
    "KillSnapshot",
    "Lab",
    "LabCancelled",
    "Mismatch",
    "ModelLogLine",
    "NodeKillLine",
    "NodeKillRecord",
    "PaidCallPrediction",
    "PeakMemory",
    "PointResult",
    "RecordedStatus",
    "RecoveryBreakdown",
    "RecoveryPlan",
    "RecoveryRecord",
    "RecoveryStep",
    "Row",
    "RunRecord",
    "SoakInterrupted",
    "SoakProgress",
    "SoakRecord",
    "SweepMatrix",
    "ToolLogLine",
    "Walk",
    "WayOut",
    "apply_way",
    "bill",
    "check_price_model",
    "check_soak",
    "experiment_by_name",
    "explain",
    "extra_calls",
    "plan_recovery",
    "predict_paid_calls",
    "read_mismatch",
    "run_rows",
    "run_walk",
    "soak",
    "soak_target",
    "soak_timeout",
    "write_soak",
]


def __getattr__(name: str) -> _typing.Any:
    if name in _LAZY:
        return getattr(_importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'paidtwice.lab' has no attribute {name!r}")
