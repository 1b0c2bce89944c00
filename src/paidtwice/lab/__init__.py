"""The lab: one restate-server (or cluster), the stub model and a fork server, shared by every run made on it;
the deck (`paidtwice.deck`), the sweep, the soak and `paidtwice lab up` stand on it.

Beside the `Lab` itself: the poll loop every run waits with (`Poller`, `wait_for`), the logs a run's record
lists (`model_log_of`, ...), and the bill (genai-prices' dollars, and which calls a crash added)."""

import typing as _typing

from paidtwice import _lazy
from paidtwice.lab._bill import (
    DEFAULT_PRICE_MODEL,
    PRICES_AS_OF,
    bill,
    check_price_model,
    extra_calls,
    price_usage,
)
from paidtwice.lab._lab import DEFAULT_RESTART_DELAY, Engine, Lab
from paidtwice.lab._logs import attempt_log_of, mismatches_of, model_log_of, tool_log_of
from paidtwice.lab._poll import PolledAttempt, PolledAttempts, Poller, settled, wait_for

if _typing.TYPE_CHECKING:
    from paidtwice.lab._up import LabUp

_LAZY = {"LabUp": "paidtwice.lab._up"}
"""Imported when first used: only `paidtwice lab up` needs it, and the command line starts without it."""

__all__ = [
    "DEFAULT_PRICE_MODEL",
    "DEFAULT_RESTART_DELAY",
    "PRICES_AS_OF",
    "Engine",
    "Lab",
    "LabUp",
    "PolledAttempt",
    "PolledAttempts",
    "Poller",
    "attempt_log_of",
    "bill",
    "check_price_model",
    "extra_calls",
    "mismatches_of",
    "model_log_of",
    "price_usage",
    "settled",
    "tool_log_of",
    "wait_for",
]


__getattr__ = _lazy.attributes(__name__, _LAZY)
