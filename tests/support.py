"""Helpers shared by the tests."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest


def assert_eventually(condition: Callable[[], bool], *, timeout: float = 30.0, what: str = "") -> None:
    """Poll `condition` until it holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what or condition}")
        time.sleep(0.02)
