"""A row that fails among many is reported by its own name and error, never as the others' cancellation."""

from __future__ import annotations

from dataclasses import replace

import pytest

from paidtwice._exceptions import LabCancelled
from paidtwice.deck import EXPERIMENTS, Comparison, Deck
from paidtwice.lab import Lab

CLEAN = next(row for row in EXPERIMENTS if row.name == "clean")
BROKEN = replace(CLEAN, name="broken-agent", agent="paidtwice.no_such_module:app")
"""A run whose agent cannot load: it fails at once, while the rows beside it are still running."""


def test_a_failed_row_is_named_with_its_own_error_and_the_others_are_stopped(lab: Lab) -> None:
    # A lab of its own on the session's server and stub: a failure cancels every wait of its lab.
    pair = Comparison(
        name="pair-with-a-broken-side",
        first=BROKEN,
        second=replace(CLEAN, name="clean-beside-it"),
        figure="recovery",
        deck_says="one side cannot start",
    )
    # The failing row is submitted after rows that run for seconds: those are stopped by its failure, and
    # the first of them, stopped, must not be what is reported.
    rows = [CLEAN, replace(CLEAN, name="clean-again"), pair]
    with Lab(server=lab.server, stub=lab.stub, echo=lambda message: None) as own:
        with pytest.raises(Exception) as raised:
            Deck(own).run_rows(rows)
        assert own.cancelled.is_set()
    error = raised.value
    assert not isinstance(error, LabCancelled), error
    message = str(error)
    assert message.startswith("pair-with-a-broken-side: broken-agent: "), message
    assert "exited while loading the app" in message, message
