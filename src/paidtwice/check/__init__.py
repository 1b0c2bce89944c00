"""`paidtwice check`: a project's configuration (`[tool.paidtwice]`) and every check it names, run as CI runs
them: lint, the sweeps, the replay-check of captured journals and the budgets."""

from paidtwice.check._config import (
    Budget,
    Config,
    ConfigError,
    ReplayCheckConfig,
    SweepConfig,
    find_config,
    load_config,
)
from paidtwice.check._run import (
    CHECKS,
    Outcome,
    check_sweeps,
    open_check_lab,
    run_lint,
    run_replay_check,
    run_sweeps,
)

__all__ = [
    "CHECKS",
    "Budget",
    "Config",
    "ConfigError",
    "Outcome",
    "ReplayCheckConfig",
    "SweepConfig",
    "check_sweeps",
    "find_config",
    "load_config",
    "open_check_lab",
    "run_lint",
    "run_replay_check",
    "run_sweeps",
]
