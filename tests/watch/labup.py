"""`paidtwice lab up` as the tests' server: started once per test module as a real process, stopped with
SIGTERM, and the helpers that run `paidtwice watch` against it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from support import DEADLINE, assert_eventually, descendants, temp_dirs_in_use

HERE = Path(__file__).parent
PROFILE = HERE / "fixtures" / "sweep-checkout.json"
"""`paidtwice sweep --app payment_agent:app --service Checkout --handler pay --input '"A-1"'
--script tests/watch/checkout.toml --variation changed --json ...`: the profile of the checkout handler."""


@dataclass
class LabUp:
    """A running `paidtwice lab up` process with the checkout agent."""

    process: subprocess.Popen[str]
    info: dict[str, Any]
    info_path: Path
    started: set[int] = field(default_factory=set)
    """Every process below it once it was up."""
    temp_dirs: set[Path] = field(default_factory=set)
    """The lab's directories under the temp dir."""

    @property
    def admin_urls(self) -> list[str]:
        return list(self.info["admin_urls"])

    def send(self, order: str) -> str:
        """Send one checkout; its invocation id."""
        answer = httpx.post(f"{self.info['ingress_url']}/Checkout/pay/send", json=order, timeout=30.0)
        answer.raise_for_status()
        return str(answer.json()["invocationId"])

    def stop(self) -> tuple[int, str]:
        """SIGTERM, as a container runtime stops it; its exit status and stderr."""
        self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=DEADLINE)
        return self.process.returncode, err


MAX_ATTEMPTS = 10
"""The checkout agent's retry policy pauses an invocation after this many attempts (7 s of backoff: 0.3 s,
x1.5, at most 1 s). Its retrying is caught by the live watch (a refresh every half second, started and read
once before the invocation is sent), not by `watch --once` processes started one after another, so the loop
needs no room for a Python start between two reads: only that the live watch reads within its last backoff,
which its attempts metric asserts anyway."""


@contextmanager
def lab_up(work: Path, *extra: str, max_attempts: int = MAX_ATTEMPTS) -> Iterator[LabUp]:
    """`lab up` with the checkout agent, whose retry policy pauses an invocation after `max_attempts`."""
    info_path = work / "lab.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "paidtwice", "lab", "up", "--app", "payment_agent:app", "--app-dir", str(HERE)]
        + [
            "--script",
            str(HERE / "checkout.toml"),
            "--variation",
            "changed",
            "--info",
            str(info_path),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "CHECKOUT_MAX_ATTEMPTS": str(max_attempts)},  # the agent inherits it
    )
    try:
        assert_eventually(
            lambda: info_path.exists() or process.poll() is not None, timeout=240, what="lab up"
        )
        if process.poll() is not None:
            pytest.fail(f"lab up exited {process.returncode}: {process.communicate()[1]}")
        below = descendants(process.pid)
        yield LabUp(process, json.loads(info_path.read_text()), info_path, below, temp_dirs_in_use(below))
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.communicate(timeout=DEADLINE)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)  # never reached when lab up works; the test fails then
                process.communicate()


def run_watch(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paidtwice", "watch", *args], capture_output=True, text=True, timeout=DEADLINE
    )


def admin_args(lab: LabUp) -> list[str]:
    return [arg for url in lab.admin_urls for arg in ("--admin-url", url)]


def snapshot(lab: LabUp, *args: str) -> tuple[int, dict[str, Any]]:
    """`watch --once --json -`: its exit status and the record."""
    done = run_watch("--once", "--json", "-", *admin_args(lab), *args)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def listed(lab: LabUp, invocation_id: str, *args: str) -> Callable[[], dict[str, Any] | None]:
    """A poll for the invocation's entry in a snapshot (None while it is not listed)."""

    def entry() -> dict[str, Any] | None:
        _, record = snapshot(lab, *args)
        return next((s for s in record["stuck"] if s["invocation_id"] == invocation_id), None)

    return entry


def wait_for_entry(
    poll: Callable[[], dict[str, Any] | None], holds: Callable[[dict[str, Any]], bool], *, what: str
) -> dict[str, Any]:
    found: list[dict[str, Any]] = []

    def check() -> bool:
        entry = poll()
        if entry is not None and holds(entry):
            found.append(entry)
            return True
        return False

    assert_eventually(check, timeout=120, what=what)
    return found[0]


def live_entry(work: Path, invocation_id: str) -> Callable[[], dict[str, Any] | None]:
    """A poll for the invocation's entry in the live watch's latest snapshot (work/live.json, replaced whole
    at each refresh; None while it is not listed)."""
    path = work / "live.json"

    def entry() -> dict[str, Any] | None:
        if not path.exists():
            return None
        record = json.loads(path.read_text())
        return next((s for s in record["stuck"] if s["invocation_id"] == invocation_id), None)

    return entry


def retrying_a_mismatch(entry: dict[str, Any]) -> bool:
    """Listed retrying a journal mismatch, with at least 2 attempts read from the server's own retry count.
    A fresh `watch --once` lists attempts only from that count; the live watch falls back on what it saw
    before when a read finds no count, and such a read is not the one looked for."""
    return (
        entry["state"] == "retrying"
        and entry["attempts_source"] == "sys_invocation.retry_count"
        and (entry["attempts"] or 0) >= 2
        and entry["mismatch"] is not None
    )


def wait_until_paused(port: int, service: str, handler: str) -> None:
    """Wait for the live watch on `port` to count the invocation paused: a cheap HTTP read of its metrics,
    where polling `watch --once` until then would start a Python process after another."""
    assert_eventually(
        lambda: metric(port, "paidtwice_paused_total", service=service, handler=handler) == 1.0,
        timeout=120,
        what=f"the live watch to count {service}/{handler} paused",
    )


@dataclass
class LiveWatch:
    """A running `paidtwice watch` and the port its metrics are served on."""

    process: subprocess.Popen[str]
    metrics_port: int
    """The port the watch picked for `--metrics 127.0.0.1:0` and said on stderr."""


@contextmanager
def live_watch(lab: LabUp, work: Path, *args: str) -> Iterator[LiveWatch]:
    """`paidtwice watch` refreshing every half second, with metrics on a port it picks itself (port 0, read
    back from its stderr: a port picked here and released for it could be taken by another process before
    the watch binds it), each snapshot written to work/live.json and a pause hook that appends each record it
    gets to work/hook.jsonl, its output in work/watch.out and .err; yielded once it has read the server (so
    it sees what is sent next from its start), stopped with Ctrl-C."""
    hook = work / "hook.jsonl"
    command = f"cat >> {hook}; echo >> {hook}"
    said = work / "watch.err"
    # Its table goes to files: a pipe nobody reads would fill up and stop it.
    with (work / "watch.out").open("w") as out, said.open("w") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "paidtwice", "watch", *admin_args(lab), "--interval", "0.5"]
            + ["--metrics", "127.0.0.1:0", "--on-pause", command, "--profile", str(PROFILE)]
            + ["--json", str(work / "live.json"), *args],
            stdout=out,
            stderr=err,
            text=True,
        )
    try:
        ports: list[int] = []

        def serving() -> bool:
            found = re.search(r"^metrics: http://127\.0\.0\.1:(\d+)/metrics$", said.read_text(), re.MULTILINE)
            if found:
                ports.append(int(found[1]))
            return found is not None or process.poll() is not None

        assert_eventually(serving, timeout=120, what="the live watch to say its metrics port")
        assert process.poll() is None, said.read_text()
        port = ports[0]
        assert_eventually(
            lambda: metric(port, "paidtwice_watch_up") == 1.0 or process.poll() is not None,
            timeout=120,
            what="the live watch's first read",
        )
        assert process.poll() is None, said.read_text()
        yield LiveWatch(process, port)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=DEADLINE)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def metric(port: int, name: str, **labels: str) -> float | None:
    """The value of the sample `name` with these labels on watch's /metrics, read with prometheus-client's
    own parser (None if absent)."""
    try:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10.0).text
    except httpx.HTTPError:
        return None
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    return None
