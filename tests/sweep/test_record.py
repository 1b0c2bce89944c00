"""`paidtwice record` and `sweep --record FILE --upstream URL` against a second local OpenAI-compatible
server standing in for the provider: each call goes out once with the key from OPENAI_API_KEY, the answers
are written as a script file a later sweep replays offline, and the key is in no output, record or file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support import DEADLINE

from paidtwice.engine._ports import HOST, lease_port
from paidtwice.lab import Lab
from paidtwice.sweep._options import Answers
from paidtwice.sweep._sweep import sweep
from paidtwice.targets import TargetSpec

ROOT = Path(__file__).resolve().parents[2]
AGENT = Path(__file__).resolve().parent / "auto_agent"
KEY = f"sk-paidtwice-test-{uuid.uuid4().hex}"
TRIP = {"city": "Lyon", "nights": 2}
FINAL = "Lyon: 18 degrees, and a 4-star hotel for two nights."


class Provider:
    """A stand-in for the provider: chat completions that check the key, a tool call then a final text."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.refused = 0
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                if (
                    self.path != "/v1/chat/completions"
                    or self.headers.get("authorization") != f"Bearer {KEY}"
                ):
                    provider.refused += 1
                    self._send(401, {"error": {"message": "bad key"}})
                    return
                provider.requests.append(body)
                if any(m.get("role") == "tool" for m in body["messages"]):
                    message: dict[str, Any] = {"role": "assistant", "content": FINAL}
                else:
                    arguments = json.dumps({"city": "Lyon", "unit": "celsius"})
                    call = {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "weather", "arguments": arguments},
                    }
                    message = {"role": "assistant", "content": None, "tool_calls": [call]}
                usage = {"prompt_tokens": 321, "completion_tokens": 12, "total_tokens": 333}
                choice = {"index": 0, "message": message, "finish_reason": "stop"}
                self._send(200, {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                 "choices": [choice], "usage": usage})  # fmt: skip

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._lease = lease_port()
        self._server = ThreadingHTTPServer((HOST, self._lease.port), Handler)
        self.url = f"http://{HOST}:{self._lease.port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Provider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
        self._lease.release()


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    with Provider() as running:
        yield running


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paidtwice", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "OPENAI_API_KEY": KEY, "PYTHONUNBUFFERED": "1"},
        timeout=DEADLINE,
    )


def assert_no_key(done: subprocess.CompletedProcess[str], folder: Path) -> None:
    assert KEY not in done.stdout and KEY not in done.stderr
    for path in folder.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_record_then_sweep_offline(lab: Lab, provider: Provider, tmp_path: Path) -> None:
    out = tmp_path / "recorded.toml"
    before = len(provider.requests)
    done = cli(
        "record", "--app", "agent:app", "--service", "Planner", "--handler", "run_naive",
        "--input", json.dumps(TRIP), "--app-dir", str(AGENT), "--upstream", provider.url, "--out", str(out),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "recorded 2 model call(s)" in done.stderr
    assert len(provider.requests) - before == 2 and provider.refused == 0
    assert provider.requests[-1]["tools"][0]["function"]["name"] == "weather"  # sent as the agent sent it
    text = out.read_text()
    assert 'tool = "weather"' in text and FINAL in text
    assert_no_key(done, tmp_path)
    # Offline: the provider is not asked again; the sweep replays the file.
    asked = len(provider.requests)
    (matrix,) = sweep(
        TargetSpec(app="agent:app", service="Planner", handler="run_naive", input=TRIP, app_dir=AGENT),
        answers=Answers(script=out, variations=("steady",)),
        lab=lab,
    )
    assert json.loads(matrix.clean.answer) == FINAL
    assert matrix.clean.model_calls == 2
    assert any(p.extra_model_calls for p in matrix.points)  # the naive handler pays again
    assert len(provider.requests) == asked


def test_sweep_record_asks_each_call_once(provider: Provider, tmp_path: Path) -> None:
    out = tmp_path / "answers.json"
    results = tmp_path / "results"
    before = len(provider.requests)
    done = cli(
        "sweep", "--app", "agent:app", "--service", "Planner", "--handler", "run_naive",
        "--input", json.dumps(TRIP), "--app-dir", str(AGENT), "--variation", "steady",
        "--record", str(out), "--upstream", provider.url, "--results-dir", str(results),
        "--html", str(results / "page.html"),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # The clean run asks twice; every replay of a point is answered from the recording.
    assert len(provider.requests) - before == 2
    turns = json.loads(out.read_text())["turn"]
    assert [t.get("tool") for t in turns] == ["weather", None]
    records = json.loads(next(results.glob("sweep-*.json")).read_text())
    assert records and all(r["script"] == "steady" for r in records)
    assert any(r["extra_model_calls"] for r in records)  # the naive handler pays again, offline
    assert_no_key(done, tmp_path)


def test_a_refused_key_is_one_line_without_the_key(provider: Provider, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "paidtwice", "record", "--app", "agent:app", "--service", "Planner",
         "--handler", "run_naive", "--input", json.dumps(TRIP), "--app-dir", str(AGENT),
         "--upstream", provider.url, "--out", str(tmp_path / "x.toml")],
        capture_output=True, text=True, cwd=tmp_path, timeout=DEADLINE,
        env={**os.environ, "OPENAI_API_KEY": "sk-wrong-" + KEY[::-1]},
    )  # fmt: skip
    assert done.returncode == 2
    assert "answered HTTP 401" in done.stderr
    assert KEY[::-1] not in done.stderr + done.stdout
    assert not (tmp_path / "x.toml").exists()
