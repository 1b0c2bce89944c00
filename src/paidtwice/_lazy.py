"""A package face's names imported when first used (PEP 562): what a face exports without paying for the
modules at import time (an agent process imports `paidtwice.agent.host`, never the lab; the command line
starts without `lab up`'s module)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["attributes"]


def attributes(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package` that imports each name of `homes` from its module when first
    asked for, and raises AttributeError for any other."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(home), name)

    return __getattr__
