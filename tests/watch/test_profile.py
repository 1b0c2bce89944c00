"""What a profile says each attempt pays outside the journal, read from real records of the checkout handler
(a sweep, a soak, lint's findings), and the snapshot's words for people; no server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from support import DEADLINE

from paidtwice._exceptions import UsageError
from paidtwice.engine import port_is_listening
from paidtwice.report._watch import format_watch, watch_section
from paidtwice.results import Mismatch
from paidtwice.stub._usage import TokenUsage
from paidtwice.watch import (
    AttemptCost,
    MetricsServer,
    StuckInvocation,
    WatchSnapshot,
    WayOutLine,
    load_profile,
    parse_listen,
)

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"


def test_a_sweep_gives_the_measured_attempt_that_ended_in_a_mismatch() -> None:
    profile = load_profile(FIXTURES / "sweep-checkout.json")
    assert (profile.kind, profile.service, profile.handler) == ("sweep", "Checkout", "pay")
    cost = profile.cost("journal-mismatch")
    assert cost is not None and cost.bound == "measured" and cost.priced
    # Each retry after the mismatch asked the model once; under `changed` it answers with 1,500 + 40 tokens.
    assert (cost.calls, cost.usage) == (1, TokenUsage(1500, 40))
    assert "attempts that ended in a journal mismatch" in cost.source
    assert profile.error is None  # no attempt of that sweep ended in another error...
    assert profile.cost("other-error") is cost  # ...so one is priced as a mismatching one
    assert profile.applies_to("Checkout", "pay") and not profile.applies_to("Checkout", "refund")


def test_a_soak_gives_at_most_its_clean_invocations_calls() -> None:
    soak = json.loads((FIXTURES / "soak-checkout.json").read_text())
    profile = load_profile(FIXTURES / "soak-checkout.json")
    assert (profile.kind, profile.service, profile.handler) == ("soak", "Checkout", "pay")
    cost = profile.cost("journal-mismatch")
    assert cost is not None and cost.bound == "at most"
    assert cost.calls == soak["clean_model_calls"] == 1  # none journaled in the checkout agent
    assert cost.usage.prompt_tokens == soak["usage"]["prompt_tokens"] // soak["model_calls"]


def test_lints_findings_count_call_sites_and_price_nothing(tmp_path: Path) -> None:
    findings = tmp_path / "lint.json"
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", "lint", str(HERE / "payment_agent.py"), "--format", "json"],
        capture_output=True,
        text=True,
    )
    findings.write_text(done.stdout)
    profile = load_profile(findings)
    cost = profile.cost("journal-mismatch")
    assert profile.service is None and profile.applies_to("Anything", "at_all")
    assert cost is not None and (cost.calls, cost.bound, cost.priced) == (1, "call sites", False)


def test_what_is_not_a_profile_is_one_line(tmp_path: Path) -> None:
    two = json.loads((FIXTURES / "sweep-checkout.json").read_text())
    two[0]["mode"] = "Checkout/refund"
    (tmp_path / "two.json").write_text(json.dumps(two))
    (tmp_path / "text.json").write_text("not json")
    (tmp_path / "none.json").write_text("[]")
    cases = {
        tmp_path / "missing.json": "no such file",
        tmp_path / "text.json": "cannot be read as JSON",
        tmp_path / "two.json": "sweeps several handlers (Checkout/pay, Checkout/refund)",
        tmp_path / "none.json": "holds no records",
    }
    for path, said in cases.items():
        with pytest.raises(UsageError, match=None) as caught:
            load_profile(path)
        assert said in str(caught.value) and "\n" not in str(caught.value)


def test_metrics_listen_address_is_checked() -> None:
    assert parse_listen("127.0.0.1:9464") == ("127.0.0.1", 9464)
    assert parse_listen("[::1]:9464") == ("::1", 9464)
    assert parse_listen("127.0.0.1:0") == ("127.0.0.1", 0)
    for bad in ("9464", "host:", "host:99999", ":80", "host:-1"):
        with pytest.raises(UsageError):
            parse_listen(bad)


def test_metrics_on_port_0_serve_on_the_free_port_they_say() -> None:
    metrics = MetricsServer("127.0.0.1", 0)
    try:
        assert metrics.port > 0
        assert port_is_listening(metrics.port)
        assert "paidtwice_watch_up 0.0" in httpx.get(f"http://127.0.0.1:{metrics.port}/metrics").text
    finally:
        metrics.close()
    assert not port_is_listening(metrics.port)


def _stuck(state: str) -> StuckInvocation:
    return StuckInvocation(
        invocation_id="inv_1abc",
        service="Checkout",
        handler="pay",
        key=None,
        deployment="dp_1",
        status="paused" if state == "paused" else "backing-off",
        state="paused" if state == "paused" else "retrying",
        reason="journal-mismatch",
        attempts=5,
        attempts_source="sys_invocation.retry_count",
        since="2026-12-05T23:00:00.000Z",
        last_start_at=None,
        next_retry_at=None,
        error_code="RT0016",
        last_error="Found a mismatch\nsecond line",
        mismatch=Mismatch(1, "run lookup", "handler return", True, "...", 1),
        journal_model_steps=(),
        per_attempt=AttemptCost(1, TokenUsage(1500, 40), source="sweep s.json"),
        cost_per_attempt_usd=0.000249,
        repaid_calls=4,
        repaid_usd=0.000996,
        attempts_per_hour=0.0 if state == "paused" else 3600.0,
        burn_usd_per_hour=0.0 if state == "paused" else 0.8964,
        ways_out=(WayOutLine("kill", "kill it and leave it", (), "nothing is replayed"),),
        replay_verdict=None,
    )


def test_the_table_and_the_page_say_what_burns_and_the_way_out() -> None:
    snapshot = WatchSnapshot(
        1.0, "http://restate:9070", (_stuck("retrying"), _stuck("paused")), "gpt-4o-mini", "x"
    )
    text = format_watch(snapshot)
    assert "2 invocations stuck at http://restate:9070" in text and "1 paused, 1 retrying" in text
    assert "burning $0.896400/hour" in text and "0 (paused)" in text
    assert "at journal entry 1 (command index 1): the journal holds run lookup" in text
    assert "1 model call outside the journal per attempt, 1,540 tokens, $0.000249" in text
    assert "recover inv_1abc --apply kill" in text
    assert "second line" not in text  # the first line of the error in the table; the record keeps it whole
    page = watch_section(snapshot).body
    assert "inv_1abc" in page and "$0.000996" in page
    empty = WatchSnapshot(1.0, "http://restate:9070", (), "gpt-4o-mini", "x")
    assert format_watch(empty).startswith("nothing stuck at http://restate:9070")


def test_lab_up_refuses_a_bad_script_or_app_dir_before_starting_anything(tmp_path: Path) -> None:
    for args, said in (
        (["--script", "nope"], "neither a stub script"),
        (["--app-dir", str(tmp_path / "missing")], "is not a directory"),
        (["--script", str(HERE / "checkout.toml"), "--variation", "sideways"], "'sideways' is not one of"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "paidtwice", "lab", "up", *args],
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
        assert done.returncode == 2 and said in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
