"""The protocol proxy the lab registers in front of a command's deployment (see `paidtwice.agent._command`).

It reads the service protocol's frames both ways on one HTTP/2 stream per attempt, logs each event, and can
hold the server's frames back from the agent at a chosen journal entry. It runs on a loop thread of its own.

Every service of the deployment is served under a name of the run's own (the swept one as `renamed`, the
others `NAME_TAG`), so a run's invocation tree (the handler, the handlers of the deployment it calls, itself
again) stays in the run's process: a call or send the agent makes to a service of its deployment is renamed
on the way out (CallCommand, OneWayCallCommand), and back to the code's name in the journal a replay reads.
Each callee's invocation id is logged beside its caller's ("callee"), and each awakeable the handler
suspends on is written to the run's step log as the host writes it ("op" of kind "awakeable", its id made as
the SDKs make it), so the sweep's resolver answers it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import httpx

from paidtwice._exceptions import ServerStartError
from paidtwice.agent._catch_up import CatchUp
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
from paidtwice.agent._loop import proxy_loop
from paidtwice.agent._sources import mentions_awakeables, promise_resolvers_in
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
from paidtwice.engine import (
    HOST,
    PortLease,
    lease_port,
    load_timeout,
    port_is_listening,
    wait_until,
)

__all__ = ["Proxy"]

QUIET = 1.0
"""An attempt that has awaited nothing the journal can bring, and passed no frame, for this long waits on an
awakeable (a signal: nothing on the wire says it was made)."""
TIMER_HORIZON = 10.0
"""A timer that ends further off than this does not keep a quiet attempt from being taken as waiting on an
awakeable: an approval raced against a timeout (`orTimeout`, `select`) waits on both, and the SDK says
which only when it suspends, a minute later. A nearer timer is let fire first."""
_START_TIMEOUT = 60.0
_VALUE_LOGGED = 1 << 16
"""Bytes of a step's result the log keeps: enough to find a model answer in it."""


class Proxy:
    """The protocol proxy in front of one command's port (an ASGI app served by hypercorn)."""

    def __init__(
        self,
        *,
        target_port: int,
        service: str,
        renamed: str,
        log: Path,
        tag: str = "",
        step_log: Path | None = None,
        group: Callable[[], int | None],
        code: Path | None = None,
    ) -> None:
        self.target_port = target_port
        """The port of the process behind the proxy; a replacement's once it is to be up (see
        `CommandHost.wait_up`). Until then the dead one's: the server finds the deployment down."""
        self.group = group
        """The process group of the command behind the proxy (None while it is down): whose quiet
        `catch_up` waits for."""
        self.service = service
        self.renamed = renamed
        self.tag = tag
        """What the run's name of every other service of the deployment ends with (`NAME_TAG`)."""
        self.served: dict[str, str] = {service: renamed}
        """The code's name of each service -> the run's; filled in by discovery."""
        self.step_log = step_log
        """Where each awakeable the handler waits on is written, as the host writes it."""
        self.code = code
        """The folder of the deployment's code, where what the wire does not say is read (`_sources`)."""
        self.awakeables = code is None or mentions_awakeables(code)
        """The deployment may make awakeables: a quiet attempt is taken as waiting on one. Off where its code
        never names one, where a quiet attempt is only busy (a slow import, a call outside the journal)."""
        self.promise_schemas: dict[str, Any] = {}
        """The input schema of the shared handler that resolves each Workflow promise, by the promise's name:
        what its value is made from."""
        self.log = log
        self._lease: PortLease = lease_port()
        self._fd: int | None = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._fd_lock = threading.Lock()
        """Held while the log's descriptor is written or closed: an attempt still logging as the proxy closes
        must not write to (or close) a number the process has given to another file or socket since."""
        self._attempts = 0
        self.hold_entries: int | None = None
        """Hold (never pass on) the first frame from the server that brings the journal to this many entries,
        or the whole attempt if it starts with them; until the agent is killed, then never again. The agent's
        frames that would take the journal past it are held too (`_Attempt.holds_back`)."""
        self.hold_inbound = True
        """False: only the agent's frames are held at `hold_entries` (a moment after work the journal does
        not see, a model answer outside every step: the agent reaches it with every frame it was sent)."""
        self.hold_pause = False
        """Hold the end of the first live durable pause (a SleepCompletionNotification beyond the journal the
        attempt replays) until the agent is killed, as the host's `HOLD_PAUSE` does: a kill aimed at the pause
        lands in it however late it comes. Only in the first attempt to end after it is set."""
        self._released: asyncio.Event | None = None
        self._live: set[_Attempt] = set()
        """The attempts under way (on the proxy's loop): those a `go_on` may find held at the pause."""
        self._shutdown: asyncio.Event | None = None
        self._client: httpx.AsyncClient | None = None
        self._served: Future[None] | None = None
        self.catch_up = CatchUp(lambda: (self.group(), self.target_port))
        """What a model answer waits for under `--cmd`: the agent quiet, the tree's callees started."""

    @property
    def port(self) -> int:
        return self._lease.port

    @property
    def target(self) -> str:
        return f"http://{HOST}:{self.target_port}"

    def _write(self, **fields: Any) -> None:
        line = (json.dumps({**fields, "at": time.time()}) + "\n").encode()
        with self._fd_lock:
            if self._fd is not None:
                os.write(self._fd, line)

    def start(self) -> None:
        from hypercorn.asyncio import serve
        from hypercorn.config import Config

        loop = proxy_loop()
        config = Config()
        config.bind = [f"{HOST}:{self.port}"]
        config.accesslog = None
        config.errorlog = None

        async def run() -> None:
            self._released = asyncio.Event()
            self._shutdown = asyncio.Event()
            # h2c with prior knowledge, as restate-server speaks to a deployment; no pool limits or timeouts:
            # a held call or a durable pause outlasts any default.
            self._client = httpx.AsyncClient(http1=False, http2=True, timeout=None)
            try:
                await serve(self, config, shutdown_trigger=self._shutdown.wait)  # type: ignore[arg-type]
            finally:
                await self._client.aclose()

        served = self._served = asyncio.run_coroutine_threadsafe(run(), loop)
        # As long as loads take here: on a loaded machine the proxy's loop thread starts late as well.
        started = max(_START_TIMEOUT, load_timeout())
        if not wait_until(lambda: port_is_listening(self.port) or served.done(), timeout=started):
            raise ServerStartError(f"protocol proxy did not listen on :{self.port} in {started:.0f}s")
        if served.done():
            served.result()

    def release(self) -> None:
        """Stop holding: a held attempt fails (the agent behind it was killed) and none is held again."""
        loop = proxy_loop()
        if self._released is not None:
            loop.call_soon_threadsafe(self._released.set)

    def go_on(self, *, hold_entries: int | None, hold_inbound: bool) -> None:
        """A run held at its pause (`hold_pause`) is handed a later moment: the holds become these, and the
        pause ends unless the frame held in it is where the new hold is (the pause's end, journaled: it stays
        held for the new moment). Returns once done on the proxy's loop: a held attempt that went on has
        logged it (`went-on`) by then, so a hold seen after it is the new moment's."""

        async def on_loop() -> None:
            self.hold_pause = False
            self.hold_entries, self.hold_inbound = hold_entries, hold_inbound
            for attempt in list(self._live):
                attempt.go_on()

        asyncio.run_coroutine_threadsafe(on_loop(), proxy_loop()).result()

    def close(self) -> None:
        try:
            if self._shutdown is not None and self._served is not None:
                proxy_loop().call_soon_threadsafe(self._shutdown.set)
                try:
                    self._served.result(timeout=10)
                except Exception:  # noqa: BLE001 - shutting down; the port lease is what matters
                    pass
        finally:
            with self._fd_lock:
                fd, self._fd = self._fd, None
            if fd is not None:
                os.close(fd)
                self._lease.release()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        path = str(scope["path"])
        headers = [
            (k.decode(), v.decode())
            for k, v in scope["headers"]
            if k.lower() not in (b"host", b"content-length", b"connection", b"transfer-encoding", b"te")
        ]
        if path.startswith("/invoke/"):
            await self._invoke(path, headers, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await self._other(str(scope["method"]), path, bytes(body), headers, send)

    async def _respond(self, send: Any, status: int, body: bytes, content_type: str = "text/plain") -> None:
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", content_type.encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def _other(
        self, method: str, path: str, body: bytes, headers: list[tuple[str, str]], send: Any
    ) -> None:
        assert self._client is not None
        try:
            response = await self._client.request(method, self.target + path, content=body, headers=headers)
        except httpx.TransportError as err:
            await self._respond(send, 502, f"deployment unreachable: {err}".encode())
            return
        content = response.content
        content_type = response.headers.get("content-type", "application/json")
        if path.startswith("/discover") and response.status_code == 200:
            manifest = json.loads(content)
            self._write_promise_resolvers(manifest)
            for service in manifest.get("services", []):
                service["name"] = self._served_name(str(service.get("name")))
            content = json.dumps(manifest).encode()
        await self._respond(send, response.status_code, content, content_type)

    def _write_promise_resolvers(self, manifest: dict[str, Any]) -> None:
        """Which shared handler resolves each promise of the deployment's Workflows, read from its code and
        written to the step log as the host writes it (the sweep resolves a promise through it)."""
        if self.step_log is None or self.code is None:
            return
        shared: dict[str, list[str]] = {}
        inputs: dict[tuple[str, str], Any] = {}
        for service in manifest.get("services", []):
            if str(service.get("ty", "")).upper() != "WORKFLOW":
                continue
            name = str(service.get("name"))
            handlers = [h for h in service.get("handlers", []) if str(h.get("ty", "")).upper() == "SHARED"]
            shared[name] = [str(h.get("name")) for h in handlers]
            inputs |= {(name, str(h.get("name"))): (h.get("input") or {}).get("jsonSchema") for h in handlers}
        found = promise_resolvers_in(self.code, shared) if shared else {}
        self.promise_schemas = {p: inputs[(w, h)] for w, ps in found.items() for p, h in ps.items()}
        served = {self._served_name(w): ps for w, ps in found.items()}
        line = {"event": "promise_resolvers", "services": served, "at": time.time()}
        with open(self.step_log, "a") as log:
            log.write(json.dumps(line) + "\n")

    def _served_name(self, name: str) -> str:
        """The run's name of a deployment's service (the swept one's `renamed`, the others' `NAME_TAG`)."""
        if name not in self.served:
            self.served[name] = f"{re.sub(r'[^A-Za-z0-9_]', '_', name)}_{self.tag}" if self.tag else name
        return self.served[name]

    async def _invoke(self, path: str, headers: list[tuple[str, str]], receive: Any, send: Any) -> None:
        """One attempt, both ways at once (the protocol is a bidirectional stream)."""
        assert self._released is not None
        self._attempts += 1
        attempt = _Attempt(self, self._attempts, self._released, receive, send)
        self._live.add(attempt)
        try:
            await attempt.run(path, headers)
        finally:
            self._live.discard(attempt)

    @property
    def code_names(self) -> dict[str, str]:
        """The run's name of each service -> the code's."""
        return {new: old for old, new in self.served.items()}

    def write_wait(self, invocation: str, n: int, kind: str, name: str, *, guess: bool = False) -> None:
        """An awakeable or a promise the handler waits on, as the host logs one (`sweep._approvals`);
        `guess`: read from a quiet attempt, not from its suspension."""
        if self.step_log is None:
            return
        line: dict[str, Any] = {"invocation": invocation, "event": "op", "n": n, "kind": kind, "name": name}
        line["at"] = time.time()
        if kind == "awakeable":
            # Its type is in the code only: an approval (true) unless --resolve or the script says otherwise.
            line["schema"] = {"const": True}
        elif self.promise_schemas.get(name) is not None:
            line["schema"] = self.promise_schemas[name]
        if guess:
            line["guess"] = True
        with open(self.step_log, "a") as log:
            log.write(json.dumps(line) + "\n")

    def write_void(self, invocation: str, n: int) -> None:
        """A wait written from a quiet attempt was none: the attempt went on."""
        if self.step_log is None:
            return
        n = 1_000_000 - n if n < 0 else n
        line = {"invocation": invocation, "event": "op_void", "n": n, "at": time.time()}
        with open(self.step_log, "a") as log:
            log.write(json.dumps(line) + "\n")

    @property
    def _released_flag(self) -> bool:
        return self._released is not None and self._released.is_set()


class _Attempt:
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
