"""What each attempt said on the wire, read from Restate's service protocol as it passes through the host.

Why: polling `sys_invocation` only samples; the wire shows every attempt that reached the agent, its failure
code (570 is a journal mismatch), and, through the StartMessage's `retry_count_since_last_stored_entry`
(reset by each new command, bumped by each failed attempt, a refused connection included), the attempts made
while the agent was down. A ProposeRunCompletion and the server's next frame are the journal round trip a
`ctx.run` action waited on. Each event is one line, written with one write(2) on an O_APPEND descriptor, so
it is on disk even if the process is killed right after.

The middleware puts a cell in a context variable before the app runs and fills it from the StartMessage, so
every task of the attempt's handler reads its invocation with `attempt_invocation()`.

Frames (protocol v5 and later): a 64-bit header (16 bits type, 16 bits flags, 32 bits length, big-endian)
and a protobuf body. Types 0x0000-0x03FF are control messages, 0x0400-0x7FFF commands, 0x8000 and up
notifications.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import struct
import time
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextvars import ContextVar
from typing import Any

__all__ = [
    "GATES",
    "HOLD_PAUSE",
    "MISMATCH_ERROR_CODE",
    "RELEASE_PAUSE",
    "AttemptWire",
    "FrameReader",
    "asked_model",
    "attempt_invocation",
    "attempt_position",
    "hold_next_pause",
    "read_fields",
]

START = 0x0000
ERROR = 0x0002
END = 0x0003
SUSPENSION = 0x0001
SLEEP_COMPLETION = 0x800C
"""The server's notification that a durable sleep has ended."""
PROPOSE_RUN_COMPLETION = 0x0005
"""The agent's proposal of a `ctx.run` action's result; the action returns once the server sent it back."""
FIRST_COMMAND = 0x0400
FIRST_NOTIFICATION = 0x8000
MISMATCH_ERROR_CODE = 570
"""ErrorMessage code of a journal mismatch (RT0016)."""

HOLD_PAUSE = "hold-pause"
"""A word of the go line (`paidtwice.agent.host --wait-for-go`): the process withholds from its handler the
end of the first durable pause it lives through (not one replayed from the journal), and the pause's end in
every later attempt of that invocation, until the lab's `RELEASE_PAUSE` line (an attempt's connection that
ends first ends its hold), so a kill aimed at the pause lands in it however late it comes, and the handler
goes on only once the kill has landed (on a cluster: once the partition's leadership has settled)."""
RELEASE_PAUSE = "release-pause"
"""The line the lab writes on a serving process's stdin once its fault has landed: the held pause ends."""
GATES = "gates="
"""A line the lab writes on a serving process's stdin (`gates=model:2:before,...`): its gates from now on, in
place of those it started with (a run parked in a pause and handed a later moment, before `RELEASE_PAUSE`)."""

_HEADER = struct.Struct(">HHI")

_PAUSES_HELD: set[str] = set()
"""Invocations whose next live durable pause this process withholds the end of (`hold_next_pause`)."""


def hold_next_pause(invocation: str) -> None:
    """Withhold from `invocation`'s handler the end of the durable pause it is entering, as `HOLD_PAUSE` does
    for the deck's rows: a sweep's point in that pause is held open until its kill, however late it comes."""
    _PAUSES_HELD.add(invocation)


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class FrameReader:
    """Splits a byte stream into (type, body) frames, whatever the chunking."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> Iterator[tuple[int, bytes]]:
        self._buffer += chunk
        while len(self._buffer) >= _HEADER.size:
            kind, _flags, length = _HEADER.unpack_from(self._buffer)
            end = _HEADER.size + length
            if len(self._buffer) < end:
                return
            body = bytes(self._buffer[_HEADER.size : end])
            del self._buffer[:end]
            yield kind, body


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def read_fields(data: bytes) -> dict[int, int | bytes]:
    """A protobuf message's scalar and length-delimited fields by number (the last one wins)."""
    fields: dict[int, int | bytes] = {}
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            fields[number], at = _varint(data, at)
        elif wire == 1:
            fields[number] = int.from_bytes(data[at : at + 8], "little")
            at += 8
        elif wire == 2:
            length, at = _varint(data, at)
            fields[number] = data[at : at + length]
            at += length
        elif wire == 5:
            fields[number] = int.from_bytes(data[at : at + 4], "little")
            at += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
    return fields


class _AttemptCell:
    """The invocation id of one attempt, filled in when its StartMessage arrives ("" until then), the
    context operations its handler has made so far, and how to log an event of it."""

    __slots__ = ("invocation", "log", "ops")

    def __init__(self) -> None:
        self.invocation = ""
        self.ops = 0
        self.log: Callable[[str], None] | None = None


_ATTEMPT: ContextVar[_AttemptCell | None] = ContextVar("paidtwice_attempt", default=None)
"""The cell of the attempt the running code serves. A cell, not the id: the id arrives after the app has
started (in the request's body), and the tasks started meanwhile hold the context as it was."""


def attempt_invocation() -> str:
    """The invocation id of the attempt the calling code serves, from its StartMessage; "" outside one."""
    cell = _ATTEMPT.get()
    return cell.invocation if cell is not None else ""


def asked_model() -> None:
    """Log that the attempt the calling code serves begins a model request; nothing outside an attempt.
    A handler cut off on the server may go on until it reads the end of its stream, while the next attempt
    already runs: this says which attempt made each request, where times could not."""
    cell = _ATTEMPT.get()
    if cell is not None and cell.log is not None:
        cell.log("model")


def attempt_position() -> int:
    """Count one more context operation of the attempt the calling code serves; its position (1-based) in
    the attempt, which is the same in every attempt that replays the same code; 0 outside an attempt."""
    cell = _ATTEMPT.get()
    if cell is None:
        return 0
    cell.ops += 1
    return cell.ops


class _Inbox:
    """An attempt's request messages: those read while its pause was held come first, then the server's."""

    def __init__(self, receive: Receive) -> None:
        self.receive = receive
        self.early: list[Message] = []
        self.reading: asyncio.Future[Message] | None = None

    async def next(self) -> Message:
        if self.early:
            return self.early.pop(0)
        reading, self.reading = self.reading, None
        return await (reading if reading is not None else self.receive())

    async def until(self, released: asyncio.Event) -> bool:
        """Keep what the server sends until `released` is set (True), or the connection ends (False)."""
        waiting: asyncio.Future[Any] = asyncio.ensure_future(released.wait())
        try:
            while True:
                if self.reading is None:
                    self.reading = asyncio.ensure_future(self.receive())
                watched: set[asyncio.Future[Any]] = {self.reading, waiting}
                done, _ = await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
                if self.reading in done:
                    message, self.reading = self.reading.result(), None
                    # The end of the connection first: a handler let go in a dead attempt would call on.
                    if message.get("type") == "http.disconnect":
                        return False
                    self.early.append(message)
                if waiting in done:
                    return True
        finally:
            waiting.cancel()


class AttemptWire:
    """ASGI middleware: tells the attempt's code its invocation (`attempt_invocation`), and with a file
    descriptor logs each attempt's start, first progress, failure and end."""

    def __init__(self, app: App, fd: int | None) -> None:
        self.app = app
        self.fd = fd
        self._numbers = itertools.count(1)
        self.hold_pause = False
        """Withhold the end of the next live durable pause: the first SleepCompletionNotification the server
        sends beyond the journal it replays. That chunk and all after it reach the handler once the lab
        releases the pause (`release_pause`), or never, if the connection ends first (a kill of this
        process, of the server, of a node). Only in the first attempt to end after it is set."""
        self._holding: set[str] = set()
        """Invocations whose pause is held until `release_pause`: in each later attempt too, the pause's
        end is withheld, replayed or live, so no attempt goes past it before the kill has landed."""
        self._released = asyncio.Event()

    def release_pause(self) -> None:
        """The lab's fault has landed: let every held pause end, and hold no more."""
        self.hold_pause = False
        self._holding.clear()
        self._released.set()

    def _hold(self, invocation: str, *, replayed: bool) -> asyncio.Event | None:
        """Whether a SleepCompletionNotification of `invocation`'s attempt is withheld from its handler: what
        ends the hold when set (beside the end of the connection), or None."""
        if invocation in self._holding:
            return self._released
        if replayed or not (self.hold_pause or invocation in _PAUSES_HELD):
            return None
        # The go line's hold ends with the lab's release, a sweep point's (`hold_next_pause`) with its kill.
        until = self._released if self.hold_pause else asyncio.Event()
        if self.hold_pause:
            self._holding.add(invocation)
        self.hold_pause = False
        _PAUSES_HELD.discard(invocation)
        return until

    def _write(self, **fields: Any) -> None:
        if self.fd is None:
            return
        line = json.dumps({**fields, "pid": os.getpid(), "at": time.time()})
        os.write(self.fd, (line + "\n").encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or "/invoke/" not in str(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        attempt = next(self._numbers)
        cell = _AttemptCell()
        state: dict[str, Any] = {"invocation": None, "progressed": False, "proposed": False, "replayed": 0}
        inbound, outbound = FrameReader(), FrameReader()
        inbox = _Inbox(receive)

        def log(event: str, **fields: Any) -> None:
            self._write(invocation=state["invocation"], attempt=attempt, event=event, **fields)

        cell.log = log

        async def receive_logged() -> Message:
            message = await inbox.next()
            held: asyncio.Event | None = None
            if message.get("type") == "http.request":
                for kind, body in inbound.feed(bytes(message.get("body", b""))):
                    if kind == START and state["invocation"] is None:
                        fields = read_fields(body)
                        debug_id = fields.get(2, b"")
                        cell.invocation = debug_id.decode() if isinstance(debug_id, bytes) else ""
                        state["invocation"] = cell.invocation
                        state["replayed"] = int(fields.get(3, 0))
                        log("start", retry=int(fields.get(7, 0)), known=int(fields.get(3, 0)))
                        continue
                    replayed = state["replayed"] > 0
                    if replayed:
                        state["replayed"] -= 1  # a journal entry replayed, not the attempt's own
                    if kind == SLEEP_COMPLETION and held is None:
                        held = self._hold(cell.invocation, replayed=replayed)
                    if state["proposed"]:
                        state["proposed"] = False
                        log("ack", frame=kind)
            if held is not None:
                log("hold", frame=SLEEP_COMPLETION)
                if not await inbox.until(held):
                    return {"type": "http.disconnect"}
                log("release", frame=SLEEP_COMPLETION)
            return message

        async def send_logged(message: Message) -> None:
            if message.get("type") == "http.response.body" and state["invocation"] is not None:
                for kind, body in outbound.feed(bytes(message.get("body", b""))):
                    if FIRST_COMMAND <= kind < FIRST_NOTIFICATION and not state["progressed"]:
                        state["progressed"] = True
                        log("progress", frame=kind)
                    if kind == PROPOSE_RUN_COMPLETION:
                        state["proposed"] = True
                        log("propose")
                    elif kind == ERROR:
                        log("error", code=int(read_fields(body).get(1, 0)))
                    elif kind in (END, SUSPENSION):
                        log("end" if kind == END else "suspend")
            await send(message)

        token = _ATTEMPT.set(cell)
        try:
            await self.app(scope, receive_logged, send_logged)
        finally:
            _ATTEMPT.reset(token)
            if inbox.reading is not None:
                inbox.reading.cancel()
            # Only the pause of the attempt under way when armed: a retry's pause (after the server was
            # killed before this one's ended) is no moment the lab aims at.
            self.hold_pause = False
            _PAUSES_HELD.discard(state["invocation"])
