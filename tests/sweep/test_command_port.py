"""A command's fixed port: the Node preload moves a fixed-port HTTP/2 listen to the run's leased port, and a
command that listens elsewhere is told so from its log."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support import assert_eventually

from paidtwice.agent._command import LISTEN_PORT, listens_elsewhere
from paidtwice.engine import lease_port, port_is_listening
from paidtwice.targets import node_path

# The Restate SDK's serve in miniature: an HTTP/2 server on a fixed port, then a plain HTTP one of its own.
_SERVER = """
const http2 = require("node:http2");
const http = require("node:http");
http2.createServer((_, res) => res.end("ok")).listen({ port: FIXED }, () => console.log("up on FIXED"));
http.createServer((_, res) => res.end("ok")).listen(OTHER);
"""


def test_a_fixed_http2_port_listens_on_the_leased_one(tmp_path: Path) -> None:
    fixed, leased, other = lease_port(), lease_port(), lease_port()
    try:
        script = tmp_path / "server.cjs"
        script.write_text(_SERVER.replace("FIXED", str(fixed.port)).replace("OTHER", str(other.port)))
        env = {**os.environ, **node_path(), LISTEN_PORT: str(leased.port)}
        process = subprocess.Popen(
            ["node", str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            assert_eventually(lambda: port_is_listening(leased.port), what="the leased port to listen")
            # Only the Restate-like server moved; another server of the process kept its port.
            assert_eventually(lambda: port_is_listening(other.port), what="the other server to listen")
            assert not port_is_listening(fixed.port)
        finally:
            process.kill()
            _, err = process.communicate()
        assert f"moved the server of port {fixed.port} to port {leased.port}" in err
    finally:
        for lease in (fixed, leased, other):
            lease.release()


@pytest.mark.parametrize(
    ("log", "says"),
    [
        ("[restate] INFO: Restate SDK started listening on 9080...\n", "it says it listens on 9080"),
        ("Running on http://0.0.0.0:8000 (CTRL + C to quit)\n", "it says it listens on 8000"),
        ("listening on 4242\n", ""),  # the port asked for
        ("paidtwice: moved the server of port 9080 to port 4242\nlistening on 9080\n", ""),
        ("nothing said\n", ""),
    ],
)
def test_a_log_that_names_another_port_is_said(tmp_path: Path, log: str, says: str) -> None:
    path = tmp_path / "command.log"
    path.write_text(log)
    hint = listens_elsewhere(path, 4242)
    assert (says in hint) if says else hint == ""


def test_no_moment_is_planned_where_a_callee_races_the_held_caller() -> None:
    """A held caller cannot stop the server appending what its callees bring: the moments while a call is
    out, and after the first results of calls made at once, are not planned."""
    from paidtwice.targets._wire_timeline import _call_outstanding

    routed = ["Command: Input", "Command: Run route", "Notification: Run", "Command: Call"]
    routed += ["Notification: CallInvocationId", "Notification: Call", "Command: Output"]
    assert [n for n in range(1, 8) if not _call_outstanding(routed, n)] == [1, 2, 3, 6, 7]
    raced = ["Command: Input", "Command: Call", "Notification: CallInvocationId", "Command: Call"]
    raced += ["Notification: CallInvocationId", "Notification: Call", "Notification: Call"]
    raced += ["Command: SendSignal", "Command: Output"]
    assert [n for n in range(1, 10) if not _call_outstanding(raced, n)] == [1, 8, 9]
