"""The deck's weather agent (`paidtwice.agent.weather`) and the host that runs any Restate app for the lab."""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from paidtwice.agent._process import AgentAttempt, AgentHost

__all__ = ["AgentAttempt", "AgentHost"]

_LAZY = ("AgentAttempt", "AgentHost")
"""Imported when first used: the agent's own process (`paidtwice.agent.host`) never needs the lab's side."""


def __getattr__(name: str) -> _typing.Any:
    if name in _LAZY:
        return getattr(_importlib.import_module("paidtwice.agent._process"), name)
    raise AttributeError(f"module 'paidtwice.agent' has no attribute {name!r}")
