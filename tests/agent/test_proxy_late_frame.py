"""The protocol proxy keeps serving a connection after a frame the server sends on an attempt already
answered (its body's end, a notification appended meanwhile): restate-server sends every attempt of a
deployment on one HTTP/2 connection, and one reader lost there left every other attempt on it hanging until
the server gave the connection up, a minute later (a racer's callee and its caller retried 60 s late)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path

import h2.config
import h2.connection
import h2.events

from paidtwice.agent._proxy import Proxy
from paidtwice.engine import HOST, lease_port
from paidtwice.replay._protocol import start_message

_ANSWERED = 30.0
"""Seconds an attempt waits for the proxy's answer: the agent is down, so it answers at once."""
_ATTEMPTS = 5
"""Attempts that each get a late frame: the first one already broke the connection's reader."""


class _Server:
    """The server's side of one HTTP/2 connection to the proxy: an attempt per stream, each with a body
    left open, as restate-server streams a journal."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection((HOST, port), timeout=1.0)
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.conn.initiate_connection()
        self.sock.sendall(self.conn.data_to_send())
        self.statuses: dict[int, int] = {}
        self.ended: set[int] = set()
        self.closed = False

    def attempt(self, stream_id: int) -> None:
        headers = [
            (":method", "POST"),
            (":scheme", "http"),
            (":authority", f"{HOST}"),
            (":path", "/invoke/Racer/race"),
            ("content-type", "application/vnd.restate.invocation.v6"),
        ]
        self.conn.send_headers(stream_id, headers)
        start = start_message(
            raw_id=b"\x01" * 16, debug_id="inv_late", known_entries=0, key=None, random_seed=0
        )
        self.conn.send_data(stream_id, start)
        self._send()

    def end_body(self, stream_id: int) -> None:
        """The body's end once the status failed the attempt: an empty DATA frame that ends the stream, as
        restate-server's client sends it."""
        self.conn.end_stream(stream_id)
        self._send()

    def _send(self) -> None:
        try:
            self.sock.sendall(self.conn.data_to_send())
        except OSError:
            self.closed = True  # the proxy closed the connection

    def status(self, stream_id: int) -> int | None:
        """The status the proxy answered the attempt with; None if the connection closed or no answer came
        within `_ANSWERED`."""
        self._read_until(lambda: stream_id in self.statuses)
        return self.statuses.get(stream_id)

    def answer_ended(self, stream_id: int) -> bool:
        return self._read_until(lambda: stream_id in self.ended)

    def _read_until(self, condition: Callable[[], bool]) -> bool:
        deadline = time.monotonic() + _ANSWERED
        while not condition() and not self.closed and time.monotonic() < deadline:
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                data = b""
            if not data:
                self.closed = True
                break
            for event in self.conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    self.statuses[event.stream_id] = int(dict(event.headers)[b":status"])
                elif isinstance(event, h2.events.DataReceived):
                    self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, h2.events.StreamEnded):
                    self.ended.add(event.stream_id)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    self.closed = True
            self._send()
        return condition()


def test_a_frame_after_the_answer_leaves_the_other_attempts_served(tmp_path: Path) -> None:
    down = lease_port()  # nothing listens there: the agent is down, each attempt is answered 502
    proxy = Proxy(
        target_port=down.port,
        service="Racer",
        renamed="Racer",
        log=tmp_path / "wire.jsonl",
        group=lambda: None,
        code=tmp_path,
    )
    proxy.start()
    server = _Server(proxy.port)
    try:
        answers = []
        for n in range(_ATTEMPTS):
            stream_id = 1 + 2 * n
            server.attempt(stream_id)
            answers.append(server.status(stream_id))
            if stream_id in server.statuses:
                server.end_body(stream_id)
                assert server.answer_ended(stream_id), f"attempt {n + 1}: its answer never ended"
        last = 1 + 2 * _ATTEMPTS
        server.attempt(last)
        answers.append(server.status(last))
    finally:
        server.sock.close()
        proxy.close()
        down.release()
    assert answers == [502] * (_ATTEMPTS + 1), answers
