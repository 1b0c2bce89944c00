"""`paidtwice watch` against `paidtwice lab up`: a checkout agent that loops on RT0016 with no kill at all
(a transient failure after a journaled step, under the `changed` script), listed with its attempts, its
mismatch and its price, then paused; its metrics, its pause hook, its record in the report."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from support import DEADLINE, alive, assert_eventually
from watch.labup import (
    MAX_ATTEMPTS,
    PROFILE,
    LabUp,
    admin_args,
    lab_up,
    listed,
    live_entry,
    live_watch,
    metric,
    retrying_a_mismatch,
    run_watch,
    snapshot,
    wait_for_entry,
    wait_until_paused,
)

from paidtwice.engine._ports import lease_port

HERE = Path(__file__).parent
DEPLOY = HERE.parents[1] / "deploy"


@dataclass
class Scene:
    lab: LabUp
    work: Path
    invocation_id: str
    metrics_port: int
    watcher: subprocess.Popen[str]
    retrying: dict[str, Any]
    """Its entry while it retried (the live watch's snapshot, with --profile)."""
    paused: dict[str, Any]
    """Its entry once paused (`watch --once --json - --profile`)."""


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    work = tmp_path_factory.mktemp("watch")
    with lab_up(work) as lab, live_watch(lab, work) as watcher:
        port = watcher.metrics_port
        invocation_id = lab.send("timeout-1")
        retrying = wait_for_entry(
            live_entry(work, invocation_id),
            retrying_a_mismatch,
            what="the invocation listed retrying a journal mismatch",
        )
        wait_until_paused(port, "Checkout", "pay")
        poll = listed(lab, invocation_id, "--profile", str(PROFILE))
        paused = wait_for_entry(poll, lambda e: e["state"] == "paused", what="the invocation listed paused")
        yield Scene(lab, work, invocation_id, port, watcher.process, retrying, paused)


def test_a_mismatch_loop_is_listed_with_its_attempts_index_and_price(scene: Scene) -> None:
    entry = scene.retrying
    assert (entry["service"], entry["handler"], entry["key"]) == ("Checkout", "pay", None)
    assert entry["deployment"].startswith("dp_")
    assert entry["reason"] == "journal-mismatch" and entry["error_code"] == "RT0016"
    assert entry["attempts"] >= 2 and entry["attempts_source"] == "sys_invocation.retry_count"
    mismatch = entry["mismatch"]
    assert (mismatch["index"], mismatch["recorded"], mismatch["attempted"]) == (
        1,
        "run lookup",
        "handler return",
    )
    # The profile measured one model call (1,500 + 40 tokens) per attempt that ended in a mismatch.
    cost = entry["per_attempt"]
    assert cost["calls"] == 1 and cost["usage"] == {"prompt_tokens": 1500, "completion_tokens": 40}
    assert entry["cost_per_attempt_usd"] > 0
    assert entry["repaid_calls"] == entry["attempts"] - 1
    assert entry["repaid_usd"] == pytest.approx(entry["cost_per_attempt_usd"] * (entry["attempts"] - 1))
    assert entry["attempts_per_hour"] > 0 and entry["burn_usd_per_hour"] > 0
    # No resume while it retries; a pause, with its price on the pinned server.
    assert [way["name"] for way in entry["ways_out"]] == ["pause", "restart", "kill"]
    assert "paid once" in entry["ways_out"][0]["replay"]
    assert entry["since"] and entry["last_error"]


def test_later_it_is_listed_paused_with_a_resume_way_out(scene: Scene) -> None:
    entry = scene.paused
    assert entry["status"] == "paused" and entry["reason"] == "journal-mismatch"
    assert entry["mismatch"]["index"] == 1
    assert entry["burn_usd_per_hour"] == 0.0  # paused: it pays nothing until someone acts
    assert [way["name"] for way in entry["ways_out"]][:2] == ["resume", "restart"]
    assert "RT0016 at entry 1" in entry["ways_out"][0]["replay"]
    assert "(journal: run lookup; code: handler return)" in entry["ways_out"][0]["replay"]
    # A fresh --once never saw it retry, and the server drops the count once paused: it says so.
    assert entry["attempts"] is None and "unknown" in entry["attempts_source"]
    code, _ = snapshot(scene.lab)
    assert code == 1  # something is stuck


def test_app_gives_replay_checks_verdict_of_the_journal_against_that_code(scene: Scene) -> None:
    app = ["--app", "payment_agent:app", "--app-dir", str(HERE), "--script", str(HERE / "checkout.toml")]
    verdicts = {}
    for variation in ("changed", "steady"):
        _, record = snapshot(scene.lab, *app, "--variation", variation)
        entry = next(s for s in record["stuck"] if s["invocation_id"] == scene.invocation_id)
        verdicts[variation] = entry["replay_verdict"]
        assert record["app"] == "payment_agent:app"
        assert entry["ways_out"][0]["replay"] == entry["replay_verdict"]  # recover's judge for a resume
    # The model that changed its mind makes the code return where the journal holds the lookup.
    assert verdicts["changed"].startswith("CERTAIN MISMATCH at entry 1 (command index 1):")
    assert "the journal has run lookup, the code attempts handler return" in verdicts["changed"]
    # With the answers recorded, the code gets past the journal to the payment, which (in a fresh process)
    # times out on its first attempt: no mismatch, and the replay says what stopped it.
    assert "MISMATCH" not in verdicts["steady"]
    assert "TimeoutError('payment provider timed out')" in verdicts["steady"]


def test_the_live_watch_serves_it_by_service_and_ran_the_hook_once(scene: Scene) -> None:
    port = scene.metrics_port
    labels = {"service": "Checkout", "handler": "pay"}
    assert_eventually(
        lambda: metric(port, "paidtwice_paused_total", **labels) == 1.0, timeout=60, what="paused_total 1"
    )
    paused = {**labels, "reason": "journal-mismatch", "state": "paused"}
    assert metric(port, "paidtwice_stuck_invocations", **paused) == 1.0
    # The live watch saw it retry, so it knows about the attempts the paused invocation made: MAX_ATTEMPTS by
    # its policy, one fewer if the last backoff fell between two refreshes.
    attempts = metric(port, "paidtwice_stuck_attempts", **paused)
    assert attempts in (MAX_ATTEMPTS - 1, MAX_ATTEMPTS)
    assert (metric(port, "paidtwice_repaid_usd", **labels) or 0) > 0
    assert metric(port, "paidtwice_repaid_model_calls", **labels) == attempts - 1
    assert metric(port, "paidtwice_watch_up") == 1.0
    # A few more refreshes: the hook must not run again for the same invocation.
    read = metric(port, "paidtwice_watch_last_read_timestamp_seconds") or 0
    assert_eventually(
        lambda: (metric(port, "paidtwice_watch_last_read_timestamp_seconds") or 0) > read + 1.5,
        timeout=60,
        what="three more refreshes",
    )
    lines = [line for line in (scene.work / "hook.jsonl").read_text().splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]
    assert [r["invocation_id"] for r in records] == [scene.invocation_id]
    assert records[0]["status"] == "paused" and records[0]["attempts"] == attempts


def test_the_metric_names_of_the_rules_and_the_dashboard_are_served(scene: Scene) -> None:
    served = {
        line.split(" ")[2]
        for line in httpx.get(f"http://127.0.0.1:{scene.metrics_port}/metrics").text.splitlines()
        if line.startswith("# TYPE")
    }
    served |= {name + "_total" for name in served}
    texts = (DEPLOY / "prometheus" / "paidtwice-alerts.yml").read_text() + json.dumps(
        json.loads((DEPLOY / "grafana" / "paidtwice-watch.json").read_text())
    )
    import re

    used = set(re.findall(r"paidtwice_[a-z_]+", texts))
    assert used and used <= served, used - served


def test_a_real_prometheus_scrapes_it(scene: Scene, tmp_path: Path) -> None:
    prometheus = shutil.which("prometheus")
    if prometheus is None:
        pytest.skip("prometheus is not installed (Debian's prometheus package; scripts/test.sh installs it)")
    lease = lease_port()  # held until Prometheus is gone: no other lab picks the port it binds
    web = lease.port
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        f"rule_files: [{DEPLOY / 'prometheus' / 'paidtwice-alerts.yml'}]\n"
        "scrape_configs:\n"
        f"  - job_name: paidtwice\n    static_configs: [{{targets: ['127.0.0.1:{scene.metrics_port}']}}]\n"
    )
    process = subprocess.Popen(
        [prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}"]
        + [f"--web.listen-address=127.0.0.1:{web}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        query = 'paidtwice_stuck_invocations{service="Checkout",state="paused"}'

        def scraped() -> bool:
            try:
                answer = httpx.get(f"http://127.0.0.1:{web}/api/v1/query", params={"query": query}).json()
            except (httpx.HTTPError, ValueError):
                return False
            return any(r["value"][1] == "1" for r in answer.get("data", {}).get("result", []))

        assert_eventually(scraped, timeout=90, what="Prometheus to scrape the paused invocation")
    finally:
        process.terminate()
        process.wait(timeout=DEADLINE)
        lease.release()


def test_promtool_checks_and_tests_the_alert_rules() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian's prometheus package; scripts/test.sh installs it)")
    rules = DEPLOY / "prometheus"
    checked = subprocess.run(
        [promtool, "check", "rules", str(rules / "paidtwice-alerts.yml")], capture_output=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = subprocess.run(
        [promtool, "test", "rules", "paidtwice-alerts.test.yml"], capture_output=True, cwd=rules
    )
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_report_reads_a_snapshot_back_into_its_page(scene: Scene, tmp_path: Path) -> None:
    out = tmp_path / "watch.json"
    # As the production page shows it: the sweep's profile and the model the bill is priced with
    done = run_watch(
        "--once",
        "--json",
        str(out),
        "--profile",
        str(PROFILE),
        "--price-model",
        "gpt-4o",
        *admin_args(scene.lab),
    )
    assert done.returncode == 1, done.stderr
    assert scene.invocation_id in done.stdout  # the table is printed beside the file
    schema = json.loads((HERE.parents[1] / "docs/reference/schemas/watch.schema.json").read_text())
    problems = [e.message for e in Draft202012Validator(schema).iter_errors(json.loads(out.read_text()))]
    assert problems == []
    page = tmp_path / "watch.html"
    made = subprocess.run(
        [sys.executable, "-m", "paidtwice", "report", str(out), "-o", str(page)],
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    html = page.read_text()
    assert "Watch snapshot" in html and scene.invocation_id in html
    assert "entry 1 (command index 1): journal run lookup, code handler return" in html


def test_bad_input_is_one_line_and_exit_2(scene: Scene, tmp_path: Path) -> None:
    lease = lease_port()
    try:
        unreachable = run_watch("--once", "--admin-url", f"http://127.0.0.1:{lease.port}")
    finally:
        lease.release()
    malformed = run_watch("--once", *admin_args(scene.lab), "--header", "no colon here")
    other = json.loads(PROFILE.read_text())
    for point in other:
        point["mode"], point["service"] = "Billing/charge", "Billing"
    profile = tmp_path / "billing-sweep.json"
    profile.write_text(json.dumps(other))
    another = run_watch("--once", *admin_args(scene.lab), "--profile", str(profile))
    for done, said in (
        (unreachable, "no Restate admin API answers"),
        (malformed, "--header takes 'Name: value'"),
        (another, "measured Billing/charge, a service the server"),
    ):
        assert done.returncode == 2, done.stdout + done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and said in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_watch_only_reads(scene: Scene) -> None:
    """Every request `watch` makes, with --app, --profile and a JSON file, seen through a proxy in front of
    the admin API: SQL queries, every one a SELECT."""
    target = scene.lab.info["admin_url"]
    seen: list[tuple[str, str, str]] = []

    class Recording(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            self._forward("POST")

        def do_GET(self) -> None:  # noqa: N802
            self._forward("GET")

        def do_PATCH(self) -> None:  # noqa: N802
            self._forward("PATCH")

        def do_DELETE(self) -> None:  # noqa: N802
            self._forward("DELETE")

        def _forward(self, method: str) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            seen.append((method, self.path, body.decode()))
            answer = httpx.request(
                method,
                target + self.path,
                content=body,
                headers={"Accept": "application/json", "Content-Type": "application/json"},
                timeout=30,
            )
            self.send_response(answer.status_code)
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recording)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        app = ["--app", "payment_agent:app", "--app-dir", str(HERE), "--script", str(HERE / "checkout.toml")]
        done = run_watch("--once", "--admin-url", proxy, "--profile", str(PROFILE), *app)
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 1, done.stderr
    assert scene.invocation_id in done.stdout
    queries = [
        json.loads(body)["query"] for method, path, body in seen if (method, path) == ("POST", "/query")
    ]
    assert (
        len(queries) == len(seen) and len(queries) >= 5
    )  # the list, then the invocation read as recover does
    assert all(query.lstrip().upper().startswith("SELECT ") for query in queries), queries


class _Guarded(BaseHTTPRequestHandler):
    """An admin API behind a token, as a reverse proxy puts one: 401 without the right one."""

    def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
        ok = self.headers.get("Authorization") == "Bearer right-token"
        body = json.dumps({"rows": []}).encode() if ok else b"unauthorized"
        self.send_response(200 if ok else 401)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_wrong_header_is_refused_in_one_line_and_never_shown(tmp_path: Path) -> None:
    server = HTTPServer(("127.0.0.1", 0), _Guarded)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        wrong = run_watch("--once", "--admin-url", url, "--header", "Authorization: Bearer wrong-token")
        out = tmp_path / "snapshot.json"
        right = run_watch(
            "--once", "--admin-url", url, "--header", "Authorization: Bearer right-token", "--json", str(out)
        )
    finally:
        server.shutdown()
        server.server_close()
    assert wrong.returncode == 2 and "refused the query (401)" in wrong.stderr
    assert len(wrong.stderr.strip().splitlines()) == 1
    assert right.returncode == 0, right.stderr  # nothing stuck behind the token
    for text in (wrong.stdout, wrong.stderr, right.stdout, right.stderr, out.read_text()):
        assert "wrong-token" not in text and "right-token" not in text


def test_ctrl_c_ends_the_live_watch_cleanly_and_lab_up_leaves_nothing_behind(scene: Scene) -> None:
    # Last in the module: it stops the module's watch and lab.
    scene.watcher.send_signal(signal.SIGINT)
    scene.watcher.wait(timeout=DEADLINE)
    err = (scene.work / "watch.err").read_text()
    assert scene.watcher.returncode == 1, err  # something was stuck at its last snapshot
    assert scene.invocation_id in (scene.work / "watch.out").read_text()
    assert "Traceback" not in err and "watch stopped" in err
    code, err = scene.lab.stop()
    assert code == 0, err
    assert "Traceback" not in err
    assert not scene.lab.info_path.exists()
    assert_eventually(
        lambda: not any(alive(pid) for pid in scene.lab.started), timeout=30, what="lab processes"
    )
    assert not any(path.exists() for path in scene.lab.temp_dirs)
    with pytest.raises(httpx.HTTPError):
        httpx.post(f"{scene.lab.info['admin_url']}/query", json={"query": "SELECT 1"}, timeout=2.0)
