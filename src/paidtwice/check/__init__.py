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

__all__ = [
    "Budget",
    "Config",
    "ConfigError",
    "ReplayCheckConfig",
    "SweepConfig",
    "find_config",
    "load_config",
]
