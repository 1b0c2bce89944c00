"""The deck: its rows as data (`_experiments`), the faults they name (`_faults`), and the `Deck` that runs
them on a lab (`paidtwice.lab`) and measures them, comparisons, curves and recovery walks included.

Adding a fault kind (tests/lab/test_fault_kinds.py fails on any step left out):

1. In `_faults.py`, a frozen dataclass subclassing `Fault`: `kind` (its name in records and listings),
   `describe()`, what it needs of the server (`own_server`, `nodes`); `arm` (which moment it holds open, and
   whether it needs a replacement agent), `land` (wait for the moment, kill, return the `Landing`), and
   `settle` if it leaves something down.
2. Add it to `FAULT_KINDS` at the end of `_faults.py`: the one list of kinds (this face exports it, not each
   class; a test that needs the class imports it from `_faults`).
3. Use it in a row of `_experiments.py` (a new row is a new experiment: `paidtwice experiments` lists it).
4. Test it by name under tests/ (tests/lab/ runs the deck's rows): what the deck checks about its kill.
"""

from paidtwice.deck._experiments import (
    COMPARISONS,
    CURVES,
    EXPERIMENTS,
    SCENARIOS,
    WALKS,
    Comparison,
    Curve,
    Experiment,
    Row,
    Walk,
    experiment_by_name,
    with_model_latency,
)
from paidtwice.deck._faults import FAULT_KINDS, Fault, FaultedRun, Landing
from paidtwice.deck._policy import Backoff, predict_paid_calls, server_default_policy
from paidtwice.deck._runner import Deck

__all__ = [
    "COMPARISONS",
    "CURVES",
    "EXPERIMENTS",
    "FAULT_KINDS",
    "SCENARIOS",
    "WALKS",
    "Backoff",
    "Comparison",
    "Curve",
    "Deck",
    "Experiment",
    "Fault",
    "FaultedRun",
    "Landing",
    "Row",
    "Walk",
    "experiment_by_name",
    "predict_paid_calls",
    "server_default_policy",
    "with_model_latency",
]
