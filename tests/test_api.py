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


def test_the_lab_exports_what_a_user_of_the_library_needs() -> None:
    # The deck's rows and their types, the lab that runs them, the bill: the lab's own (explain and recover are
    # paidtwice.recover's).
    # Records are the results' (paidtwice.results), the sweep and the soak their own packages'; the record
    # writer is the results' face's.
    import paidtwice.lab

    assert set(paidtwice.lab.__all__) == {
        *("EXPERIMENTS", "COMPARISONS", "CURVES", "WALKS", "SCENARIOS", "Experiment", "Comparison", "Curve"),
        *("Walk", "Row", "Expected", "RecordedStatus", "InvocationStatus"),
        # The faults a row names, one class per kind, and what a new kind is written against.
        *(
            "Fault",
            "NoFault",
            "KillInPause",
            "KillMidCall",
            "KillMidBooking",
            "ServerKillInPause",
            "PauseMidCall",
        ),
        *("NodeKillInPause", "FaultedRun", "Landing"),
        *("DEFAULT_RESTART_DELAY", "experiment_by_name"),
        *("Lab", "LabCancelled", "run_rows", "run_walk"),
        *("Bill", "bill", "extra_calls", "check_price_model", "DEFAULT_PRICE_MODEL", "PRICES_AS_OF"),
        *("Backoff", "PaidCallPrediction", "predict_paid_calls"),
        *("ServerDefaultPolicy", "server_default_policy"),
        # What the sweep, the soak, watch and the CLI build on (they import the face, not its modules).
        *("Watcher", "AttemptWatch", "wait_for", "settled", "mismatches_of", "LabUp", "price_usage"),
        *("attempt_log_of", "model_log_of", "tool_log_of", "with_model_latency"),
    }


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
