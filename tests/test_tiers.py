"""The quick tier's table (tests/tiers.py) keeps up with the commands."""

from __future__ import annotations

import pytest
from tiers import QUICK, SMOKES

from paidtwice.cli import cli


def test_every_command_has_a_smoke_in_the_quick_tier() -> None:
    assert sorted(SMOKES) == sorted(cli.commands)
    assert all(node.split("::")[0] in QUICK or node in QUICK for node in SMOKES.values())


def test_every_smoke_is_a_test_of_this_suite(request: pytest.FixtureRequest) -> None:
    collected = {item.nodeid.split("[")[0] for item in request.session.items}
    smoke_files = {node.split("::")[0] for node in SMOKES.values()}
    if not smoke_files <= {node.split("::")[0] for node in collected}:
        pytest.skip("the smokes' file is not collected in this run")
    assert set(SMOKES.values()) <= collected
