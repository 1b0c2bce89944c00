"""A handler whose model calls are partly made by a service it calls: the sweep says so, in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paidtwice._exceptions import UsageError
from paidtwice.lab import Lab
from paidtwice.lab._sweep import sweep

AGENT = Path(__file__).resolve().parent / "chain_agent"


def test_model_calls_of_a_called_service_are_named_not_miscounted(lab: Lab) -> None:
    with pytest.raises(UsageError) as raised:
        sweep(
            lab=lab,
            app="agent:app",
            service="Front",
            handler="go",
            input=json.loads('"x"'),
            script=AGENT / "script.toml",
            scripts=["steady"],
            app_dir=AGENT,
        )
    message = str(raised.value)
    assert "2 model calls of Front/go, 1 of them by the services it calls (Command: Call)" in message
    assert "\n" not in message


def test_a_key_for_a_plain_service_is_one_line(lab: Lab) -> None:
    with pytest.raises(UsageError) as raised:
        sweep(
            lab=lab,
            app="agent:app",
            service="Helper",
            handler="think",
            input="x",
            script=AGENT / "script.toml",
            scripts=["steady"],
            app_dir=AGENT,
            key="k",
        )
    message = str(raised.value)
    assert message.startswith("--key 'k' given, but Helper is a plain Service") and "\n" not in message
