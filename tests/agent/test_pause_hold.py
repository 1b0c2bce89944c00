"""The host's held pause (`hold-pause`): its end reaches the handler only once the lab releases it, in the
attempt that held it and in every later attempt of the invocation, replayed or live; an attempt whose
connection ends meanwhile never sees it. Driven in-process through the ASGI middleware, no server."""

from __future__ import annotations

import asyncio
import struct
from typing import Any

from paidtwice.agent._wire import AttemptWire

START, INPUT, SLEEP, SLEEP_DONE, RUN = 0x0000, 0x0400, 0x040C, 0x800C, 0x0411
INVOCATION = b"inv_1held"


def frame(kind: int, body: bytes = b"") -> bytes:
    return struct.pack(">HHI", kind, 0, len(body)) + body


def start(known: int) -> bytes:
    """A StartMessage: the invocation's id (field 2) and the journal entries it replays (field 3)."""
    return frame(START, bytes([2 << 3 | 2, len(INVOCATION)]) + INVOCATION + bytes([3 << 3, known]))


async def handler(scope: Any, receive: Any, send: Any) -> None:
    """Reads every chunk the server sends into the attempt's `seen`, until the connection ends."""
    while (message := await receive())["type"] != "http.disconnect":
        scope["seen"].append(message["body"])


class Attempt:
    """One attempt through the middleware: the test plays the server, `seen` is what the handler read."""

    def __init__(self, wire: AttemptWire) -> None:
        self.inbound: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.seen: list[bytes] = []
        scope = {"type": "http", "path": "/invoke/Agent/run", "seen": self.seen}
        self.task = asyncio.ensure_future(wire(scope, self.inbound.get, self.send))

    async def send(self, message: Any) -> None:
        pass

    async def server_sends(self, body: bytes) -> None:
        await self.inbound.put({"type": "http.request", "body": body, "more_body": True})
        await turns()

    async def ends(self) -> None:
        await self.inbound.put({"type": "http.disconnect"})
        await asyncio.wait_for(self.task, timeout=5)


async def turns() -> None:
    """Let every task run until it waits for what the test has not sent yet."""
    for _ in range(20):
        await asyncio.sleep(0)


def test_a_held_pause_ends_only_when_released_in_every_attempt_that_reaches_it() -> None:
    async def scenario() -> None:
        wire = AttemptWire(handler, None)
        wire.hold_pause = True  # the go line's `hold-pause`
        # The first attempt: its live pause's end is held; the kill (its connection's end) comes first.
        first = Attempt(wire)
        journal = start(1) + frame(INPUT)
        await first.server_sends(journal)
        await first.server_sends(frame(SLEEP_DONE))
        await first.server_sends(frame(RUN))  # whatever follows the held end is held with it
        assert first.seen == [journal]
        await first.ends()
        assert first.seen == [journal]
        # A retry on the new leader replays the pause's end: held until the lab's release, start and all.
        second = Attempt(wire)
        replayed = start(3) + frame(INPUT) + frame(SLEEP) + frame(SLEEP_DONE)
        await second.server_sends(replayed)
        await second.server_sends(frame(RUN))
        assert second.seen == []
        wire.release_pause()
        await turns()
        assert second.seen == [replayed, frame(RUN)]
        await second.ends()
        # Released, the wire holds nothing more.
        third = Attempt(wire)
        await third.server_sends(replayed)
        assert third.seen == [replayed]
        await third.ends()

    asyncio.run(scenario())


def test_a_retry_that_ends_while_held_never_sees_the_pause_end() -> None:
    async def scenario() -> None:
        wire = AttemptWire(handler, None)
        wire.hold_pause = True
        first = Attempt(wire)
        await first.server_sends(start(1) + frame(INPUT))
        await first.server_sends(frame(SLEEP_DONE))
        await first.ends()
        # Cut off again before the release (a leader that hands the partition on): nothing let through.
        second = Attempt(wire)
        await second.server_sends(start(2) + frame(INPUT) + frame(SLEEP))
        await second.server_sends(frame(SLEEP_DONE))
        assert second.seen == [start(2) + frame(INPUT) + frame(SLEEP)]
        await second.ends()
        assert second.seen == [start(2) + frame(INPUT) + frame(SLEEP)]
        wire.release_pause()
        third = Attempt(wire)
        await third.server_sends(start(4) + frame(INPUT) + frame(SLEEP) + frame(SLEEP_DONE))
        assert len(third.seen) == 1
        await third.ends()

    asyncio.run(scenario())


def test_a_pause_nobody_armed_is_never_held() -> None:
    async def scenario() -> None:
        attempt = Attempt(AttemptWire(handler, None))
        await attempt.server_sends(start(1) + frame(INPUT))
        await attempt.server_sends(frame(SLEEP_DONE))
        assert attempt.seen == [start(1) + frame(INPUT), frame(SLEEP_DONE)]
        await attempt.ends()

    asyncio.run(scenario())
