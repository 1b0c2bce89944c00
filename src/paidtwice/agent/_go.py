"""When a prepared agent process serves: the lines the lab writes on its stdin (`--wait-for-go`), and the
connections it turns away until then.

Each line is a moment and flags: the moment is "now", a wall-clock time, or "hold" (not before a further
line), and a later line replaces it; the flags are `hold-pause` (`HOLD_PAUSE`) and `refuse=N`. Once it
serves, its one line is `release-pause` (`RELEASE_PAUSE`): the fault has landed, the held pause ends. From its
first line the process holds the agent's listening socket (the lab's, passed at its start: a replacement
never waits for its killed predecessor to let go of the port) and resets every connection it is offered until
the moment has come and N have been reset. Restate counts a reset connection as it counts a refused one: a
failed attempt (RT0010), retried on the same backoff. Counting them is what holds a restart's down time open
until the retries it stands for have come, however late a busy server makes them, and a busy machine's late
replacement finds the retries that came meanwhile queued on the socket, not refused.
"""

from __future__ import annotations

import errno
import os
import select
import socket
import struct
import time
from dataclasses import dataclass

from paidtwice.agent._wire import GATES, HOLD_PAUSE, RELEASE_PAUSE

__all__ = [
    "GATES",
    "HOLD",
    "REFUSE",
    "RELEASE_PAUSE",
    "Go",
    "Lines",
    "go_line",
    "listening_socket",
    "turn_away",
]

HOLD = "hold"
"""The moment of a line that keeps the agent turning connections away until a further line."""
REFUSE = "refuse="
"""The flag naming how many connections to reset before serving (`refuse=N`)."""


BIND_TIMEOUT = 10.0
"""Seconds a bind waits for the agent's port to be free (a killed process may still hold it)."""


def listening_socket(port: int) -> socket.socket:
    """The agent's listening socket on `port`, bound as soon as the port is free (within `BIND_TIMEOUT`):
    the lab's, which every process of the agent inherits, or a host's own when it is given none (a command
    that runs the host on $PORT). From this moment the server's connections succeed (the kernel queues them).
    OSError if it cannot be bound."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    deadline = time.monotonic() + BIND_TIMEOUT
    while True:
        try:
            sock.bind(("127.0.0.1", port))
            break
        except OSError as err:
            if err.errno != errno.EADDRINUSE or time.monotonic() > deadline:
                sock.close()
                raise
            time.sleep(0.002)
    sock.listen(1024)
    return sock


def go_line(at: float | None, *, hold: bool = False, hold_pause: bool = False, refuse: int = 0) -> str:
    """The line telling a prepared process when to serve: at wall-clock `at` (None: now; `hold`: not before
    a further line), once `refuse` connections were reset."""
    moment = HOLD if hold else "now" if at is None else repr(at)
    return " ".join(
        [moment, *([HOLD_PAUSE] if hold_pause else []), *([f"{REFUSE}{refuse}"] if refuse else [])]
    )


@dataclass
class Go:
    """What the lab's lines have said so far."""

    moment: float | None = None
    """Wall-clock time from which the process may serve; None: held until a further line."""
    hold_pause: bool = False
    """Withhold the end of the first live durable pause (`HOLD_PAUSE`)."""
    refuse: int = 0
    """Connections to reset before serving."""

    def read(self, words: list[str]) -> None:
        """Take in one line's words."""
        if words == [RELEASE_PAUSE] or (words and words[0].startswith(GATES)):
            return  # a line for the serving process: nothing is held before it serves
        moment = words[0] if words else "now"
        self.moment = None if moment == HOLD else time.time() if moment == "now" else float(moment)
        for word in words[1:]:
            if word == HOLD_PAUSE:
                self.hold_pause = True
            elif word.startswith(REFUSE):
                self.refuse = int(word.removeprefix(REFUSE))


class Lines:
    """Lines of a file descriptor, read without a buffer that select() cannot see."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.ended = False
        """The lab closed its end: no line will come."""
        self._buffer = b""

    def read(self) -> list[list[str]]:
        """The words of each whole line that has come (one read: call it when the descriptor is readable).
        At the end of the input, a last line saying "now"."""
        chunk = os.read(self.fd, 4096)
        if not chunk:
            self.ended = True
            return [["now"]]
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        return [line.decode().split() for line in lines]

    def wait(self) -> list[list[str]]:
        """Block until at least one whole line has come; the words of each."""
        while True:
            lines = self.read()
            if lines:
                return lines


def turn_away(listener: socket.socket, lines: Lines, go: Go) -> float:
    """Reset every connection offered on `listener` until `go` lets the process serve (its moment has come
    and `go.refuse` connections were reset), reading later lines from `lines` meanwhile. The moment the
    server found the agent serving: the go moment, or the last reset after it."""
    refused, last = 0, 0.0
    # poll, not select: the listener keeps the number it had in the lab, which may be past select's 1023.
    poller = select.poll()
    poller.register(listener.fileno(), select.POLLIN)
    if not lines.ended:
        poller.register(lines.fd, select.POLLIN)
    listener.setblocking(False)
    try:
        while True:
            now = time.time()
            if go.moment is not None and now >= go.moment and refused >= go.refuse:
                return max(go.moment, last)
            waiting_for_a_moment = go.moment is not None and refused >= go.refuse
            timeout = go.moment - now if waiting_for_a_moment and go.moment is not None else None
            readable = {fd for fd, _ in poller.poll(None if timeout is None else max(0.0, timeout) * 1000)}
            if lines.fd in readable and not lines.ended:
                for words in lines.read():
                    go.read(words)
                if lines.ended:
                    poller.unregister(lines.fd)
            if listener.fileno() in readable:
                try:
                    connection, _ = listener.accept()
                except BlockingIOError:
                    continue
                _reset(connection)
                refused += 1
                last = time.time()
    finally:
        listener.setblocking(True)


def _reset(connection: socket.socket) -> None:
    """Close with a reset (a zero linger), as a dead process's socket ends: the attempt fails at once."""
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()
