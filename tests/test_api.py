"""The public API and the version pins."""

from __future__ import annotations

import importlib
import re
import tomllib
from importlib import metadata
from pathlib import Path

import paidtwice
from paidtwice import _pins

ROOT = Path(__file__).resolve().parent.parent


def test_exported_names_are_the_public_api() -> None:
    for name in (
        "paidtwice",
        "paidtwice.engine",
        "paidtwice.stub",
        "paidtwice.lab",
        "paidtwice.report",
        "paidtwice.lint",
    ):
        module = importlib.import_module(name)
        exported = set(module.__all__)
        public = {n for n in vars(module) if not n.startswith("_")}
        submodules = {n for n, v in vars(module).items() if type(v).__name__ == "module"}
        assert exported == public - submodules - {"annotations"}, name


def test_sdk_pin_is_in_one_place_and_installed() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [d for d in project["dependencies"] if d.startswith("restate-sdk")]
    assert pins == [f"restate-sdk=={_pins.RESTATE_SDK_VERSION}"]
    assert metadata.version("restate-sdk") == _pins.RESTATE_SDK_VERSION


def test_server_pin_is_one_the_lab_knows() -> None:
    assert _pins.RESTATE_SERVER_VERSION in _pins.RESTATE_SERVER_VERSIONS
    assert re.fullmatch(r"\d+\.\d+\.\d+", _pins.RESTATE_SERVER_VERSION)
    assert paidtwice.__doc__
