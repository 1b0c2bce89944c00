"""The lab: experiment rows as data, faults, the runner and its records.

Its face has two parts: what a user of the library needs (the deck's rows, the `Lab` that runs them, the bill,
explain and recover: tests/test_api.py lists them), and what the sweep, the soak and the command line build on
(the watcher of an invocation's attempts, a run's logs, a service's per-run name, the lab that stays up)."""

import typing as _typing

from paidtwice import _lazy
from paidtwice._exceptions import LabCancelled
from paidtwice.lab._bill import (
    DEFAULT_PRICE_MODEL,
    PRICES_AS_OF,
    Bill,
    bill,
    check_price_model,
    extra_calls,
    price_usage,
)
from paidtwice.lab._experiments import (
    COMPARISONS,
    CURVES,
    DEFAULT_RESTART_DELAY,
    EXPERIMENTS,
    SCENARIOS,
    WALKS,
    Comparison,
    Curve,
    Expected,
    Experiment,
    InvocationStatus,
    RecordedStatus,
    Row,
    Walk,
    experiment_by_name,
    with_model_latency,
)
from paidtwice.lab._faults import (
    Fault,
    FaultedRun,
    KillInPause,
    KillMidBooking,
    KillMidCall,
    Landing,
    NodeKillInPause,
    NoFault,
    PauseMidCall,
    ServerKillInPause,
)
from paidtwice.lab._measures import attempt_log_of, model_log_of, tool_log_of
from paidtwice.lab._policy import (
    Backoff,
    PaidCallPrediction,
    ServerDefaultPolicy,
    predict_paid_calls,
    server_default_policy,
)
from paidtwice.lab._rows import run_rows
from paidtwice.lab._runner import Lab
from paidtwice.lab._walks import run_walk
from paidtwice.lab._watch import AttemptWatch, Watcher, mismatches_of, settled, wait_for

if _typing.TYPE_CHECKING:
    from paidtwice.lab._up import LabUp

_LAZY = {"LabUp": "paidtwice.lab._up"}
"""Imported when first used: only `paidtwice lab up` needs it, and the command line starts without it."""

__all__ = [
    "COMPARISONS",
    "CURVES",
    "DEFAULT_PRICE_MODEL",
    "DEFAULT_RESTART_DELAY",
    "EXPERIMENTS",
    "PRICES_AS_OF",
    "SCENARIOS",
    "WALKS",
    "AttemptWatch",
    "Backoff",
    "Bill",
    "Comparison",
    "Curve",
    "Expected",
    "Experiment",
    "Fault",
    "FaultedRun",
    "InvocationStatus",
    "KillInPause",
    "KillMidBooking",
    "KillMidCall",
    "Lab",
    "LabCancelled",
    "LabUp",
    "Landing",
    "NoFault",
    "NodeKillInPause",
    "PaidCallPrediction",
    "PauseMidCall",
    "RecordedStatus",
    "Row",
    "ServerDefaultPolicy",
    "ServerKillInPause",
    "Walk",
    "Watcher",
    "attempt_log_of",
    "bill",
    "check_price_model",
    "experiment_by_name",
    "extra_calls",
    "mismatches_of",
    "model_log_of",
    "predict_paid_calls",
    "price_usage",
    "run_rows",
    "run_walk",
    "server_default_policy",
    "settled",
    "tool_log_of",
    "wait_for",
    "with_model_latency",
]


__getattr__ = _lazy.attributes(__name__, _LAZY)
