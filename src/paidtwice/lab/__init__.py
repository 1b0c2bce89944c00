"""The lab: experiment rows as data, faults, the runner and its records."""

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
    "Backoff",
    "Bill",
    "Comparison",
    "Curve",
    "Expected",
    "Experiment",
    "Explanation",
    "Fault",
    "FaultKind",
    "InvocationStatus",
    "Lab",
    "LabCancelled",
    "PaidCallPrediction",
    "RecordedStatus",
    "RecoveryPlan",
    "Row",
    "Walk",
    "WayOut",
    "apply_way",
    "bill",
    "check_price_model",
    "experiment_by_name",
    "explain",
    "extra_calls",
    "plan_recovery",
    "predict_paid_calls",
    "read_mismatch",
    "run_rows",
    "run_walk",
]
