"""The lab: experiment rows as data, faults, the runner and its records."""

from paidtwice.lab._experiments import (
    CLEAN_JOURNALED_JOURNAL,
    CLEAN_NAIVE_JOURNAL,
    CURVES,
    DEFAULT_RESTART_DELAY,
    EXPERIMENTS,
    Curve,
    Expected,
    Experiment,
    Fault,
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
    RunRecord,
    ToolLogLine,
    to_jsonable,
    write_records,
)
from paidtwice.lab._runner import Lab, LabCancelled

__all__ = [
    "CLEAN_JOURNALED_JOURNAL",
    "CLEAN_NAIVE_JOURNAL",
    "CURVES",
    "DEFAULT_RESTART_DELAY",
    "EXPERIMENTS",
    "Backoff",
    "Check",
    "Curve",
    "CurvePoint",
    "CurveRecord",
    "Expected",
    "Explanation",
    "Experiment",
    "Fault",
    "Lab",
    "LabCancelled",
    "Mismatch",
    "ModelLogLine",
    "PaidCallPrediction",
    "RunRecord",
    "ToolLogLine",
    "experiment_by_name",
    "explain",
    "predict_paid_calls",
    "read_mismatch",
    "to_jsonable",
    "write_records",
]
