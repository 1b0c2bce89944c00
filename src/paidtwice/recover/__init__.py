"""An invocation stopped on a journal mismatch (or retrying without end): why (`explain`, reading the RT0016
message against the journal), and the ways out, priced before one is taken (`plan_recovery`, `apply_way`).

`paidtwice explain` and `paidtwice recover` are its commands; watch, the deck's recovery walks and the reports
use it too. It reads a live server through the engine's clients and needs nothing of the lab."""

from paidtwice.recover._mismatch import MISMATCH_CODE, Explanation, explain, read_mismatch
from paidtwice.recover._ways import (
    OPERATOR_PAUSE_PRICE,
    ApplyResult,
    Judge,
    RecoveryPlan,
    WayOut,
    apply_way,
    plan_recovery,
)

__all__ = [
    "MISMATCH_CODE",
    "OPERATOR_PAUSE_PRICE",
    "ApplyResult",
    "Explanation",
    "Judge",
    "RecoveryPlan",
    "WayOut",
    "apply_way",
    "explain",
    "plan_recovery",
    "read_mismatch",
]
