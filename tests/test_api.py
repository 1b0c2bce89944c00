"""The public API and the version pins."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
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
        "paidtwice.deck",
        "paidtwice.report",
        "paidtwice.lint",
        "paidtwice.replay",
        "paidtwice.results",
        "paidtwice.agent",
        "paidtwice.soak",
        "paidtwice.recover",
    ):
        module = importlib.import_module(name)
        exported = set(module.__all__)
        # Names imported when first used are public too (paidtwice keeps the lab out of agent processes).
        lazy = set(getattr(module, "_LAZY", ()))
        public = {n for n in vars(module) if not n.startswith("_")} | lazy
        submodules = {n for n, v in vars(module).items() if type(v).__name__ == "module"}
        assert exported == public - submodules - {"annotations"}, name
        assert all(getattr(module, n) is not None for n in exported), name


def test_the_lab_exports_what_the_deck_the_sweep_and_the_soak_stand_on() -> None:
    # The lab itself and the one that stays up, the poll loop, a run's logs, the bill. Explain and recover are
    # paidtwice.recover's, records paidtwice.results', the deck's rows paidtwice.deck's.
    import paidtwice.lab

    assert set(paidtwice.lab.__all__) == {
        *("Lab", "LabUp", "Engine", "DEFAULT_RESTART_DELAY"),
        *("Poller", "PolledAttempts", "PolledAttempt", "wait_for", "settled"),
        *("attempt_log_of", "model_log_of", "tool_log_of", "mismatches_of"),
        *("bill", "extra_calls", "check_price_model", "price_usage", "DEFAULT_PRICE_MODEL", "PRICES_AS_OF"),
    }


def test_the_deck_exports_its_rows_their_faults_and_its_runner() -> None:
    import paidtwice.deck

    exported = set(paidtwice.deck.__all__)
    assert exported == {
        *("EXPERIMENTS", "COMPARISONS", "CURVES", "WALKS", "SCENARIOS", "Experiment", "Comparison", "Curve"),
        *("Walk", "Row", "experiment_by_name", "with_model_latency", "Deck"),
        # The registry of the faults a row names (each kind's class listed there once, not again here),
        # and what a new kind is written against.
        *("Fault", "FAULT_KINDS", "FaultedRun", "Landing"),
        # What a curve predicts a retry policy pays.
        *("Backoff", "predict_paid_calls", "server_default_policy"),
    }
    assert len(exported) <= 30, "a face lists what its users need, not every name once reached for"


def test_the_pytest_plugin_exports_what_it_defines() -> None:
    # paidtwice.testing imports the lab's names to use them, not to export them: its API is what it defines.
    module = importlib.import_module("paidtwice.testing")
    defined = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == module.__name__
    }
    assert set(module.__all__) == defined
    assert all(getattr(module, name) is not None for name in module.__all__)


def test_an_agent_process_does_not_import_the_lab() -> None:
    code = "import sys, paidtwice.agent.host; print(sorted(m for m in sys.modules if 'paidtwice' in m))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "paidtwice.agent._wire" in loaded
    assert "paidtwice.lab" not in loaded and "paidtwice.stub" not in loaded, loaded


def test_sdk_pin_is_in_one_place_and_installed() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [d for d in project["dependencies"] if d.startswith("restate-sdk")]
    assert pins == [f"restate-sdk=={_pins.RESTATE_SDK_VERSION}"]
    assert metadata.version("restate-sdk") == _pins.RESTATE_SDK_VERSION


def test_server_pin_is_one_the_lab_knows() -> None:
    assert _pins.RESTATE_SERVER_VERSION in _pins.RESTATE_SERVER_VERSIONS
    assert re.fullmatch(r"\d+\.\d+\.\d+", _pins.RESTATE_SERVER_VERSION)
    assert paidtwice.__doc__


def test_price_database_pin_is_in_one_place_and_installed() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [d for d in project["dependencies"] if d.startswith("genai-prices")]
    assert pins == [f"genai-prices=={_pins.GENAI_PRICES_VERSION}"]
    assert metadata.version("genai-prices") == _pins.GENAI_PRICES_VERSION
