"""A key given for a plain service is refused in one line. (A handler calling another is swept with its
callee: tests/sweep/test_sweep_tree.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from paidtwice._exceptions import UsageError
from paidtwice.lab import Lab
from paidtwice.sweep._options import Answers
from paidtwice.sweep._sweep import sweep
from paidtwice.targets import TargetSpec

AGENT = Path(__file__).resolve().parent / "chain_agent"


def test_a_key_for_a_plain_service_is_one_line(lab: Lab) -> None:
    with pytest.raises(UsageError) as raised:
        sweep(
            TargetSpec(app="agent:app", service="Helper", handler="think", input="x", app_dir=AGENT, key="k"),
            answers=Answers(script=AGENT / "script.toml", variations=("steady",)),
            lab=lab,
        )
    message = str(raised.value)
    assert message.startswith("--key 'k' given, but Helper is a plain Service") and "\n" not in message
