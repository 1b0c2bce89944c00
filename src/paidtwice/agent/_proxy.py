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
from paidtwice.agent._loop import proxy_loop
from paidtwice.agent._proxy_attempt import Attempt
from paidtwice.agent._sources import mentions_awakeables, promise_resolvers_in
from paidtwice.engine import (
    HOST,
    PortLease,
    lease_port,
    load_timeout,
    port_is_listening,
    wait_until,
)

__all__ = ["Proxy"]

_START_TIMEOUT = 60.0


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
        frames that would take the journal past it are held too (`Attempt.holds_back`)."""
        self.hold_inbound = True
        """False: only the agent's frames are held at `hold_entries` (a moment after work the journal does
        not see, a model answer outside every step: the agent reaches it with every frame it was sent)."""
        self.hold_pause = False
        """Hold the end of the first live durable pause (a SleepCompletionNotification beyond the journal the
        attempt replays) until the agent is killed, as the host's `HOLD_PAUSE` does: a kill aimed at the pause
        lands in it however late it comes. Only in the first attempt to end after it is set."""
        self._released: asyncio.Event | None = None
        self._live: set[Attempt] = set()
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
        attempt = Attempt(self, self._attempts, self._released, receive, send)
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
