"""What the defaults cost: the server's default retry policy (read from the server, run on a server whose
default is shortened, predicted for the pinned one) and the operator's pause in the middle of a model call."""

from __future__ import annotations

import pytest

from paidtwice.agent import weather
from paidtwice.deck import Deck, experiment_by_name, server_default_policy
from paidtwice.engine import RestateServer
from paidtwice.lab import Lab
from paidtwice.recover import OPERATOR_PAUSE_PRICE
from paidtwice.results import ComparisonRecord, RunRecord


@pytest.fixture(scope="module")
def default_policy(lab: Lab) -> ComparisonRecord:
    (record,) = Deck(lab).run_rows([experiment_by_name("default-retry-policy")])
    assert isinstance(record, ComparisonRecord)
    return record


def test_the_pinned_servers_default_is_read_from_the_server_itself() -> None:
    server = RestateServer(echo=lambda message: None)
    try:
        policy = server_default_policy(server.config(), version=server.version)
        # The durations come as the binary prints them ("500ms", "1m"): read, not assumed.
        shortened = RestateServer(
            extra_env={"RESTATE_DEFAULT_RETRY_POLICY__MAX_INTERVAL": "1s 500ms"}, echo=lambda message: None
        )
        try:
            assert server_default_policy(shortened.config(), version="x").backoff.maximum == 1.5
        finally:
            shortened.stop()
    finally:
        server.stop()
    assert (policy.backoff.max_attempts, policy.on_max_attempts) == (70, "pause")
    assert (policy.backoff.initial, policy.backoff.factor, policy.backoff.maximum) == (0.5, 2.0, 60.0)
    assert 60 * 60 < policy.backoff.total_wait() < 65 * 60
    assert weather.retry_policy("server") is None


def test_a_service_without_a_policy_pays_what_the_servers_default_predicts(
    default_policy: ComparisonRecord,
) -> None:
    server_default, on_service = default_policy.runs
    assert server_default.server_flags and not on_service.server_flags
    assert server_default.retry_policy == "the server's default"
    assert on_service.retry_policy.startswith("10 attempts then pause")
    assert (server_default.model_calls, server_default.attempts) == (on_service.model_calls, 10)
    ran, predicted = default_policy.checks[:2]
    assert ran.ok and ran.measured == f"{server_default.model_calls} vs {on_service.model_calls}"
    # The pinned default's prediction names the policy it read and what it predicts.
    assert "70 attempts then pause, 500 ms x2 up to 60 s" in predicted.figure
    assert "--dump-config" in predicted.figure
    assert predicted.ok and predicted.measured.startswith("paused, 69 paid calls, the pause 63 to 82 min")
    assert default_policy.matches


def test_the_operators_pause_mid_call_waits_for_the_step_and_pays_it_once(
    deck_records: dict[str, RunRecord],
) -> None:
    record = deck_records["operator-pause-mid-call"]
    calls = [(c.method, c.path.rsplit("/", 1)[-1], c.status) for c in record.admin_log if c.method == "PATCH"]
    assert calls == [("PATCH", "pause", 202), ("PATCH", "resume", 200)]
    # The call in flight was answered and journaled before the invocation paused; the resume replayed it.
    assert record.model_calls == 2 and all(line.delivered for line in record.model_log)
    assert [a.outcome for a in record.attempt_log] == ["suspended", "completed"]
    assert record.status == "completed" and record.matches
    # recover and watch state that price beside the pause they offer.
    assert "paid once" in OPERATOR_PAUSE_PRICE and "operator-pause-mid-call" in OPERATOR_PAUSE_PRICE
