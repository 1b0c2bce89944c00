"""One attempt through the protocol proxy (`paidtwice.agent._proxy`): the server's frames to the agent and
the agent's back, each logged to the proxy's wire log, and the server's frames held back from the agent at the
journal entry or the durable pause's end the proxy names, until the agent is killed or (a run parked in its
pause, `Proxy.go_on`) the proxy is handed a later moment. What the handler waits on is read from the wire
and written to the run's step log, as the host writes it.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from paidtwice.agent._frames import (
    CALL_COMMAND,
    CALL_INVOCATION_ID,
    COMPLETE_AWAKEABLE_COMMAND,
    COMPLETING_COMMANDS,
    FIRST_AWAKEABLE,
    GET_PROMISE_COMMAND,
    ONE_WAY_CALL_COMMAND,
    RUN_COMMAND,
    SIGNAL_NOTIFICATION,
    SLEEP_COMMAND,
    RawFrames,
    awakeable_id,
    completed_signal,
    packed_varints,
    renamed_frame,
)
from paidtwice.agent._h2 import H2Stream, StreamClosed
from paidtwice.agent._wire import (
    END,
    ERROR,
    FIRST_COMMAND,
    FIRST_NOTIFICATION,
    PROPOSE_RUN_COMPLETION,
    SLEEP_COMPLETION,
    START,
    SUSPENSION,
    read_fields,
)

if TYPE_CHECKING:
    from paidtwice.agent._proxy import Proxy

__all__ = ["Attempt"]

QUIET = 1.0
"""An attempt that has awaited nothing the journal can bring, and passed no frame, for this long waits on an
awakeable (a signal: nothing on the wire says it was made)."""
TIMER_HORIZON = 10.0
"""A timer that ends further off than this does not keep a quiet attempt from being taken as waiting on an
awakeable: an approval raced against a timeout (`orTimeout`, `select`) waits on both, and the SDK says
which only when it suspends, a minute later. A nearer timer is let fire first."""
_VALUE_LOGGED = 1 << 16
"""Bytes of a step's result the log keeps: enough to find a model answer in it."""


class Attempt:
    """One attempt through the proxy: the server's frames in, the agent's frames out, each logged, and the
    server's frames held back from the agent at the entry `Proxy.hold_entries` names."""

    def __init__(self, proxy: Proxy, number: int, released: asyncio.Event, receive: Any, send: Any) -> None:
        self.proxy = proxy
        self.number = number
        self.released = released
        self.receive = receive
        self.send = send
        self.invocation = ""
        self.retry = 0
        self.entries = 0
        """Journal entries so far: those the attempt started with, then each command and notification."""
        self.replayed = 0
        """Entries of the journal the attempt starts with that have not passed yet."""
        self.held = False
        self.held_frames: list[tuple[int, bytes]] = []
        """The held frame and those read after it, while held: what goes on if the pause is handed a later
        moment (`go_on`); the held one has been counted and logged already."""
        self.going_on = asyncio.Event()
        """Set when a held frame goes on after all (`go_on`)."""
        self.more = True
        """The server has more of its request body to send."""
        self.inbound = RawFrames()
        self.pending: list[bytes] = []
        """Inbound frames read but not yet sent to the agent."""
        self.names: dict[int, str] = {}
        """Step names by completion id: from the journal the attempt replays and the RunCommands it sends."""
        self.progressed = False
        self.raw_id = b""
        """The invocation's id as bytes (StartMessage field 1), from which awakeable ids are made."""
        self.waited: set[int] = set()
        """The waits (signal indexes, promise completion ids) written to the step log by this attempt."""
        self.open: set[int] = set()
        """Completion ids of the commands whose result has not come back."""
        self.timers: dict[int, float] = {}
        """When each timer (SleepCommand, by completion id) ends, wall clock."""
        self.promises: dict[int, str] = {}
        """Promise names by the completion id of their GetPromiseCommand."""
        self.signals: set[int] = set()
        """The awakeables (signal indexes) resolved in the journal so far."""
        self.completed: set[int] = set()
        """The awakeables (signal indexes) the handler resolved or rejected itself: never waited for."""
        self.last_frame = time.time()
        self.done = False
        self.guessed: set[int] = set()
        """Waits written from a quiet attempt: void once another frame passes (the handler was busy)."""
        self.proposed: set[int] = set()
        """Completion ids of step results sent to the server whose notification has not come back: each is
        an entry the server will journal whatever the proxy holds back from the agent."""
        self.blocked = False
        """The agent's frames are kept from the server: one more would take the journal past the held one."""
        self.ended = False
        """The agent sent End, Suspension or Error: the server ends its body on it, not on the answer."""
        self.unreachable = ""
        """Why the agent gave no answer (its stream closed first): `run` answers 502."""

    def log(self, event: str, **fields: Any) -> None:
        self.proxy._write(invocation=self.invocation, attempt=self.number, event=event, **fields)

    def hold_here(self, kind: int | None = None) -> bool:
        """Whether to hold the frame of `kind` just read (None: the attempt as it starts) here."""
        if self.proxy._released_flag:
            return False
        if kind == SLEEP_COMPLETION and self.proxy.hold_pause:
            return True
        hold = self.proxy.hold_entries
        return hold is not None and self.entries == hold and self.proxy.hold_inbound

    def holds_back(self, kind: int) -> bool:
        """Whether the agent's frame of `kind`, and every one after it, stays at the proxy: it would add an
        entry past the held one (parallel steps whose results come at once would otherwise be journaled
        together, and no kill could land between them)."""
        if not self.blocked:
            hold = self.proxy.hold_entries
            adds = FIRST_COMMAND <= kind < FIRST_NOTIFICATION or kind == PROPOSE_RUN_COMPLETION
            if hold is None or not adds or self.proxy._released_flag:
                return False
            if self.entries + len(self.proposed) < hold:
                return False
            self.blocked = True
            self.log("held", entries=self.entries, outbound=True)
        return True

    async def run(self, path: str, headers: list[tuple[str, str]]) -> None:
        # The StartMessage and the journal it announces come first; an attempt that starts at the held entry
        # never reaches the agent.
        while self.more and (not self.invocation or self.replayed > 0):
            if not await self.read():
                return
        if not self.held and self.hold_here():
            self.log("held", entries=self.entries)
            await self.released.wait()
            await self.answer(503, b"held by paidtwice; the deployment was killed")
            return
        _, _, rest = path.partition("/invoke/")
        service, _, handler = rest.partition("/")
        service = self.proxy.code_names.get(service, service)
        try:
            stream = await H2Stream.open(self.proxy.target_port, f"/invoke/{service}/{handler}", headers)
        except OSError as err:
            await self.answer(502, f"deployment unreachable: {err}".encode())
            return
        self.log("start", retry=self.retry, known=self.entries)
        pumping = asyncio.ensure_future(self.pump_in(stream))
        self.last_frame = time.time()
        watching = asyncio.ensure_future(self.watch_quiet())
        answered = True
        try:
            answered = await self.pump_out(stream)
        except StreamClosed:
            # The agent was killed mid-attempt. End the server's stream now, as the agent's dead connection
            # would: left to the ASGI server, it stays open until its keep-alive timeout (5 s), and the server
            # would retry that much later than it does for a deployment that dies.
            pass
        finally:
            self.done = True
            # Only the pause of the attempt under way when armed, as the host's: a retry's is not the moment.
            self.proxy.hold_pause = False
            pumping.cancel()
            watching.cancel()
            stream.close()
        if self.unreachable:  # answered only now: with the pump stopped, `drain` reads the server alone
            await self.answer(502, self.unreachable.encode())
        elif answered:
            if self.ended:
                await self.drain()
            await self.send({"type": "http.response.body", "body": b""})

    async def answer(self, status: int, text: bytes) -> None:
        """Answer the attempt without the agent: the server fails it on the status, then ends its body."""
        await self.send({"type": "http.response.start", "status": status, "headers": []})
        await self.send({"type": "http.response.body", "body": text, "more_body": True})
        await self.drain()
        await self.send({"type": "http.response.body", "body": b""})

    async def drain(self) -> None:
        """Read the server's body to its end before the answer ends: hypercorn forgets a stream whose answer
        ended, and the server's next frame on it stops the connection's reader (every attempt on it hangs)."""
        while self.more:
            message = await self.receive()
            self.more = message["type"] != "http.disconnect" and bool(message.get("more_body"))

    async def read(self) -> bool:
        """Read the next piece of the server's body into `pending`; False once the server went away."""
        message = await self.receive()
        if message["type"] == "http.disconnect":
            self.more = False
            return False
        self.more = bool(message.get("more_body"))
        self.take(bytes(message.get("body", b"")))
        return True

    def take(self, chunk: bytes) -> None:
        """Read inbound frames into `pending`, up to a held frame (nothing after it goes on)."""
        self.take_frames(self.inbound.feed(chunk))

    def take_frames(self, frames: list[tuple[int, bytes]]) -> None:
        for i, (kind, raw) in enumerate(frames):
            if self.held:
                self.held_frames += frames[i:]
                return
            if kind == START:
                fields = read_fields(raw[8:])
                debug_id = fields.get(2, b"")
                self.invocation = debug_id.decode() if isinstance(debug_id, bytes) else ""
                raw_id = fields.get(1, b"")
                self.raw_id = raw_id if isinstance(raw_id, bytes) else b""
                self.entries = self.replayed = int(fields.get(3, 0))
                self.retry = int(fields.get(7, 0))
                self.proxy.catch_up.started(self.invocation)
            elif self.replayed > 0:
                self.replayed -= 1  # an entry of the journal the attempt starts with
                self.track(kind, raw[8:])
                if kind == RUN_COMMAND:
                    self.name_step(raw[8:])
                elif kind in (CALL_COMMAND, ONE_WAY_CALL_COMMAND):
                    raw = renamed_frame(raw, self.proxy.code_names)  # as the code names it, to compare
                elif kind == CALL_INVOCATION_ID:
                    self.log_callee(raw[8:])
            elif kind >= FIRST_NOTIFICATION:
                self.entries += 1
                fields = read_fields(raw[8:])
                self.proposed.discard(int(fields.get(1, 0)))
                self.track(kind, raw[8:])
                signal = fields.get(2) if kind == SIGNAL_NOTIFICATION else None  # an awakeable's index
                named = {"signal": signal} if isinstance(signal, int) else {}
                self.log("notification", frame=kind, entries=self.entries, **named)
                if kind == CALL_INVOCATION_ID:
                    self.log_callee(raw[8:])
                if self.hold_here(kind):
                    self.held = True
                    self.held_frames = frames[i:]
                    return
            self.pending.append(raw)

    def go_on(self) -> None:
        """The proxy's holds changed (`Proxy.go_on`): a frame held mid-attempt that no hold now stops goes on
        to the agent, with those read after it (up to a frame the new holds stop)."""
        if not self.held or not self.held_frames or self.released.is_set():
            return
        (kind, raw), *after = self.held_frames
        if self.hold_here(kind):
            return
        self.held, self.held_frames = False, []
        self.log("went-on", entries=self.entries)
        self.pending.append(raw)
        self.take_frames(after)
        self.going_on.set()

    def track(self, kind: int, body: bytes) -> None:
        """What the handler can be waiting for: commands without their result, awakeables resolved."""
        self.last_frame = time.time()
        # The frame that ends a guessed wait (the awakeable's signal, the promise's completion) proves it;
        # any other frame says the quiet was work the wire does not show (a call outside the journal).
        wrong = self.guessed - {self.wait_ended_by(kind, body)}
        for n in wrong:
            self.proxy.write_void(self.invocation, n)
        self.waited -= wrong
        self.guessed.clear()
        if kind in COMPLETING_COMMANDS:
            fields = read_fields(body)
            completion = int(fields.get(11, 0))
            self.open.add(completion)
            key = fields.get(1, b"")
            if kind == GET_PROMISE_COMMAND and isinstance(key, bytes):
                self.promises[completion] = key.decode(errors="replace")
            elif kind == SLEEP_COMMAND:
                self.timers[completion] = int(fields.get(1, 0)) / 1000  # wake_up_time, epoch millis
        elif kind == SIGNAL_NOTIFICATION:
            signal = int(read_fields(body).get(2, 0))
            if signal >= FIRST_AWAKEABLE:
                self.signals.add(signal)
        elif kind >= FIRST_NOTIFICATION:
            self.open.discard(int(read_fields(body).get(1, 0)))

    @staticmethod
    def wait_ended_by(kind: int, body: bytes) -> int | None:
        """The guessed wait a notification ends, as `guessed` names it: a signal by its index, a promise by
        its completion id negated."""
        if kind == SIGNAL_NOTIFICATION:
            return int(read_fields(body).get(2, 0))
        if kind >= FIRST_NOTIFICATION:
            return -int(read_fields(body).get(1, 0))
        return None

    async def watch_quiet(self) -> None:
        """Write what the handler waits on once it went quiet: the promises it awaits, or else (nothing it
        awaits can come from the journal, but a timer far off) the next awakeable it made."""
        while not self.done:
            await asyncio.sleep(QUIET / 4)
            if self.done or self.held or time.time() - self.last_frame < QUIET or not self.invocation:
                continue
            awaited = {c: self.promises[c] for c in self.open if c in self.promises}
            for completion, name in awaited.items():
                if -completion not in self.waited:
                    self.waited.add(-completion)
                    n = 1_000_000 + completion
                    self.guessed.add(-completion)
                    self.proxy.write_wait(self.invocation, n, "promise", name, guess=True)
            far = {c for c, ends in self.timers.items() if ends - time.time() > TIMER_HORIZON}
            if self.open - far or not self.raw_id or not self.proxy.awakeables:
                continue
            taken = self.signals | self.completed  # resolved, or completed by the handler: never waited for
            signal = min(set(range(FIRST_AWAKEABLE, FIRST_AWAKEABLE + len(taken) + 1)) - taken)
            if signal not in self.waited:
                self.waited.add(signal)
                self.guessed.add(signal)
                name = awakeable_id(self.raw_id, signal)
                self.proxy.write_wait(self.invocation, signal, "awakeable", name, guess=True)

    def name_step(self, body: bytes) -> int:
        fields = read_fields(body)
        name = fields.get(12, b"")
        completion = int(fields.get(11, 0))
        self.names[completion] = name.decode() if isinstance(name, bytes) else ""
        return completion

    async def flush(self, stream: H2Stream) -> None:
        for raw in self.pending:
            await stream.send(raw)
        self.pending.clear()

    async def pump_in(self, stream: H2Stream) -> None:
        """The server's frames to the agent, until the body ends or a frame is held."""
        try:
            while True:
                await self.flush(stream)
                if self.held:
                    self.log("held", entries=self.entries)
                    if not await self.held_until_kill():
                        stream.reset()
                        return
                    continue  # handed a later moment: the held frame goes on
                if not self.more:
                    break
                if not await self.read():
                    stream.reset()
                    return
            await stream.end()
        except (OSError, StreamClosed):
            return

    async def held_until_kill(self) -> bool:
        """Wait while a frame is held: False once the kill released the hold (the attempt ends), True if
        the frame went on instead (`go_on`)."""
        while self.held and not self.released.is_set():
            self.going_on.clear()
            released = asyncio.ensure_future(self.released.wait())
            going_on = asyncio.ensure_future(self.going_on.wait())
            try:
                await asyncio.wait({released, going_on}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                released.cancel()
                going_on.cancel()
        return not self.released.is_set()

    async def pump_out(self, stream: H2Stream) -> bool:
        """The agent's answer to the server, each frame logged on the way; False if the agent gave none
        (`unreachable` says why: `run` answers the attempt 502)."""
        try:
            status, response_headers = await stream.response()
        except StreamClosed as err:
            self.unreachable = f"deployment unreachable: {err}"
            return False
        kept = [
            (k, v)
            for k, v in response_headers
            if not k.startswith(b":") and k.lower() not in (b"content-length", b"connection")
        ]
        await self.send({"type": "http.response.start", "status": status, "headers": kept})
        outbound = RawFrames()
        async for chunk in stream.chunks():
            frames = []
            for kind, raw in outbound.feed(chunk):
                if self.holds_back(kind):
                    continue  # never reaches the server: the agent is killed before it would
                self.log_outbound(kind, raw[8:])
                if kind in (CALL_COMMAND, ONE_WAY_CALL_COMMAND):
                    raw = renamed_frame(raw, self.proxy.served)  # to the run's copy of the callee
                frames.append(raw)
            if frames:
                await self.send({"type": "http.response.body", "body": b"".join(frames), "more_body": True})
        return True

    def log_callee(self, body: bytes) -> None:
        callee = read_fields(body).get(16, b"")
        if isinstance(callee, bytes) and callee:
            self.proxy.catch_up.callee(self.invocation, callee.decode())
            self.log("callee", callee=callee.decode())

    def log_outbound(self, kind: int, body: bytes) -> None:
        self.track(kind, body)
        if FIRST_COMMAND <= kind < FIRST_NOTIFICATION:
            self.entries += 1
            if not self.progressed:
                self.progressed = True
                self.log("progress", frame=kind)
            self.log("command", frame=kind, entries=self.entries)
        if kind in (CALL_COMMAND, ONE_WAY_CALL_COMMAND):
            fields = read_fields(body)
            service, handler = (
                (v.decode(errors="replace") if isinstance(v, bytes) else "")
                for v in (fields.get(1), fields.get(2))
            )
            follows = service in self.proxy.served
            if follows and kind == CALL_COMMAND:
                self.proxy.catch_up.call(self.invocation, self.entries)
            self.log("call", service=service, handler=handler, follows=follows)
        if kind == RUN_COMMAND:
            completion = self.name_step(body)
            self.log("run", id=completion, name=self.names[completion])
        elif kind == PROPOSE_RUN_COMPLETION:
            fields = read_fields(body)
            done = int(fields.get(1, 0))
            self.proposed.add(done)
            value = fields.get(14, b"")
            # The result as text (a failure has none): the sweep looks for the model's answer in it.
            text = value[:_VALUE_LOGGED].decode(errors="replace") if isinstance(value, bytes) else ""
            self.log("step", id=done, name=self.names.get(done, ""), value=text)
        elif kind == COMPLETE_AWAKEABLE_COMMAND:
            signal = completed_signal(body, self.raw_id)
            if signal is not None:
                # One of its own: the server appends its signal whatever the proxy holds from the agent.
                self.completed.add(signal)
                self.log("completes", signal=signal, entries=self.entries)
        elif kind == ERROR:
            self.ended = True
            self.log("error", code=int(read_fields(body).get(1, 0)))
        elif kind in (END, SUSPENSION):
            self.done = self.ended = True
            self.log("end" if kind == END else "suspend")
        if kind == SUSPENSION:
            for signal in packed_varints(body, 2):
                if signal >= FIRST_AWAKEABLE and signal not in self.waited and self.raw_id:
                    self.waited.add(signal)
                    name = awakeable_id(self.raw_id, signal)
                    self.proxy.write_wait(self.invocation, signal, "awakeable", name)
