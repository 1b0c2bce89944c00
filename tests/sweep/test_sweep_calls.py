"""A handler whose model calls are partly made by a service it calls: the sweep says so, in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paidtwice._exceptions import UsageError
from paidtwice.lab import Lab
from paidtwice.sweep._options import Answers
from paidtwice.sweep._sweep import sweep
from paidtwice.targets import TargetSpec

AGENT = Path(__file__).resolve().parent / "chain_agent"


def test_model_calls_of_a_called_service_are_named_not_miscounted(lab: Lab) -> None:
    with pytest.raises(UsageError) as raised:
        sweep(
            TargetSpec(
                app="agent:app", service="Front", handler="go", input=json.loads('"x"'), app_dir=AGENT
            ),
            answers=Answers(script=AGENT / "script.toml", variations=("steady",)),
            lab=lab,
        )
    message = str(raised.value)
    assert "2 model calls of Front/go, 1 of them by the services it calls (Command: Call)" in message
    assert "\n" not in message


def test_a_key_for_a_plain_service_is_one_line(lab: Lab) -> None:
    with pytest.raises(UsageError) as raised:
        sweep(
            TargetSpec(app="agent:app", service="Helper", handler="think", input="x", app_dir=AGENT, key="k"),
            answers=Answers(script=AGENT / "script.toml", variations=("steady",)),
            lab=lab,
        )
    message = str(raised.value)
    assert message.startswith("--key 'k' given, but Helper is a plain Service") and "\n" not in message
