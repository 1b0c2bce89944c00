"""Why a handler whose clean run ended before its first model call is not swept: the hint about the model
client's base URL only where the failure reads as one that could not reach its endpoint."""

from __future__ import annotations

from paidtwice.engine import InvocationRow
from paidtwice.sweep._not_swept import NO_MODEL_CALL, before_first_call


def _backing_off(failure: str | None) -> InvocationRow:
    return InvocationRow(
        "inv_1", "Desk/answer", "backing-off", "dp_1", 3, None, None, failure, None, None, 1, None, None
    )


def test_a_failure_of_its_own_is_the_cause_and_no_hint_about_the_model_client() -> None:
    said = str(
        before_first_call("Desk/answer", {"x": 1}, _backing_off("ValueError: quantity must be > 0"), [])
    )
    assert "the last attempt failed: ValueError: quantity must be > 0" in said
    assert NO_MODEL_CALL not in said


def test_a_client_that_could_not_connect_or_no_failure_at_all_gets_the_hint() -> None:
    refused = _backing_off("openai.APIConnectionError: Connection error.")
    assert str(before_first_call("Desk/answer", "q", refused, [])).endswith(NO_MODEL_CALL)
    assert str(before_first_call("Desk/answer", "q", _backing_off(None), [])).endswith(NO_MODEL_CALL)
