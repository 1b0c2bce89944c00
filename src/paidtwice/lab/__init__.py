"""The lab: experiment rows as data, faults, the runner and its records."""

from paidtwice.lab._deck import run_rows
from paidtwice.lab._experiments import (
    CLEAN_JOURNALED_JOURNAL,
    CLEAN_NAIVE_JOURNAL,
    CURVES,
    DEFAULT_RESTART_DELAY,
    EXPERIMENTS,
    SCENARIOS,
    WALKS,
    Curve,
    Expected,
    Experiment,
    Fault,
    Row,
    Walk,
    experiment_by_name,
)
from paidtwice.lab._mismatch import Explanation, explain, read_mismatch
from paidtwice.lab._policy import Backoff, PaidCallPrediction, predict_paid_calls
from paidtwice.lab._records import (
    Check,
    CurvePoint,
    CurveRecord,
    Mismatch,
    ModelLogLine,
    RecoveryRecord,
    RecoveryStep,
    RunRecord,
    ToolLogLine,
    to_jsonable,
    write_records,
)
from paidtwice.lab._recover import ApplyResult, RecoveryPlan, WayOut, apply_way, plan_recovery
from paidtwice.lab._runner import Lab, LabCancelled
from paidtwice.lab._soak import SoakRecord, soak
from paidtwice.lab._walks import run_walk

__all__ = [
    "CLEAN_JOURNALED_JOURNAL",
    "CLEAN_NAIVE_JOURNAL",
    "CURVES",
    "DEFAULT_RESTART_DELAY",
    "EXPERIMENTS",
    "SCENARIOS",
    "WALKS",
    "ApplyResult",
    "Backoff",
    "Check",
    "Curve",
    "CurvePoint",
    "CurveRecord",
    "Expected",
    "Experiment",
    "Explanation",
    "Fault",
    "Lab",
    "LabCancelled",
    "Mismatch",
    "ModelLogLine",
    "PaidCallPrediction",
    "RecoveryPlan",
    "RecoveryRecord",
    "RecoveryStep",
    "Row",
    "RunRecord",
    "SoakRecord",
    "ToolLogLine",
    "Walk",
    "WayOut",
    "apply_way",
    "experiment_by_name",
    "explain",
    "plan_recovery",
    "predict_paid_calls",
    "read_mismatch",
    "run_rows",
    "run_walk",
    "soak",
    "to_jsonable",
    "write_records",
]
