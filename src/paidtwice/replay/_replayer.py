"""Replay captured journals against code, in-process, with no restate-server: will this code replay them?

    with Replayer("agent:app", script="steady") as replayer:
        result = replayer.replay_journal(load_journal(Path("inv_1a2b.json")))  # raises ReplayDivergence
        results = replayer.replay_journals(journals)                           # a result per journal

    async with Replayer("agent:app") as replayer:                              # in an async test
        result = await replayer.replay_journal_async(journal)

Each journal is fed to the real, unchanged restate-sdk endpoint of the app (its ASGI app, called in-process):
a StartMessage with `known_entries` and the invocation's random seed, then every recorded entry, the input
closed behind them, exactly as the server opens an attempt. The SDK replays the handler against them and
answers with frames: an ErrorMessage (570 is a journal mismatch, RT0016), new commands past the journal's
end, a SuspensionMessage, an EndMessage. The verdict is read from those frames:

    replays    the code reproduced every recorded command in order (and, for a complete journal, the
               recorded output); nothing new
    diverges   the SDK's journal mismatch, read with the same reader as `paidtwice explain`
    continues  the journal is incomplete; the code replays it and would go on live with `next_command`
    fails      the handler raised, or the SDK reported another error, during the replay
    undecided  the replay could not tell: the seed is unknown and the outcome depends on it, the code made
               an HTTP request outside the journal that paidtwice does not send, or it timed out

Nothing reaches a real model or tool. Model requests (chat completions, through httpx: the openai client's)
are sent to the lab's stub model, on a lane of their own per journal, answered by the script: a call made
during a replay is a second ask of its turn (the recorded run asked once already), so `changed` and
`drifting` answer as on a retry. Each such call is listed in the result. Past the journal's end, a step
action (`ctx.run`, `ctx.run_typed`, `ctx.time()`) is never executed: the replay is stopped before it runs,
and the result names it. Any other HTTP request the handler makes is not sent: the replay stops there.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import importlib
import inspect
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from paidtwice._exceptions import PaidtwiceError, UsageError
from paidtwice._words import count
from paidtwice.agent._wire import MISMATCH_ERROR_CODE, read_fields
from paidtwice.lab._mismatch import read_mismatch
from paidtwice.replay._journal import JournalFile, load_journal
from paidtwice.replay._protocol import (
    END,
    ERROR,
    SUSPENSION,
    Frame,
    entry_message_type,
    frame,
    is_command,
    message_label,
    read_frames,
    start_message,
)
from paidtwice.replay._seed import invocation_id_bytes, random_seed
from paidtwice.stub._ledger import INVOCATION_HEADER
from paidtwice.stub._scripts import SCRIPTS, Answer, Script
from paidtwice.stub._server import Lane, StubModel
from paidtwice.stub._turns import VARIATIONS, load_script_file

__all__ = [
    "RECORD_KIND",
    "VERDICTS",
    "AppError",
    "OutsideCall",
    "ReplayDivergence",
    "ReplayResult",
    "Replayer",
    "load_app",
]

VERDICTS = ("replays", "continues", "diverges", "fails", "undecided")
DEFAULT_TIMEOUT = 30.0
RECORD_KIND = "replay-check"
"""The kind a result's JSON record carries as "record", beside the results format (see `paidtwice report`)."""
_OTHER_SEED_MASK = 0x9E3779B97F4A7C15
"""XORed into a seed to get a second, different one: an unknown seed is tried two ways."""


class AppError(UsageError):
    """The app cannot be loaded, or does not have the service or handler a journal is of."""


class ReplayDivergence(PaidtwiceError):
    """A journal did not replay on the code (raised by `replay_journal` unless told not to)."""

    def __init__(self, result: ReplayResult) -> None:
        super().__init__(result.describe())
        self.result = result
        """The replay's result."""


@dataclass(frozen=True)
class OutsideCall:
    """A model call the code made outside the journal during an offline replay, answered by the stub."""

    number: int
    """1-based among the replay's calls."""
    url: str
    """Where the code sent it (it went to the stub instead)."""
    turn: int
    """The conversation turn the stub read from the request."""
    ask: int
    """Which ask of that turn the stub answered (the recorded run's ask counted as the first)."""
    answer: str
    """What the stub answered: the tool call it asked for, or the text."""
    during_replay: bool
    """True while recorded entries were still being replayed: production pays for such a call again on
    every replay. False past the journal's end: work the code would do live next."""


@dataclass(frozen=True)
class ReplayResult:
    """The verdict on one journal replayed against the code."""

    path: str | None
    """The journal file, if it came from one."""
    invocation_id: str
    """The journal's invocation."""
    service: str
    """Its service."""
    handler: str
    """Its handler."""
    verdict: str
    """replays, continues, diverges, fails or undecided (see the module's docstring)."""
    index: int | None
    """Where it diverges: the command index the SDK's mismatch names (commands only, 0 is the input)."""
    recorded: str | None
    """What the journal holds at that index, read from the journal ("run weather")."""
    attempted: str | None
    """What the code attempted there instead ("run model", "handler return")."""
    labels_agree: bool | None
    """Whether the SDK message's "recorded"/"attempted" labels agree with the journal."""
    message: str
    """The SDK's own message, or what stopped the replay."""
    next_command: str | None
    """For a journal that continues: what the code would do next, live ("sleep", "run weather", "output")."""
    outside_calls: tuple[OutsideCall, ...]
    """Model calls outside the journal, each answered by the stub."""
    past_end: str
    """What was done about work past the journal's end (stopped before a step ran, calls to the stub)."""
    entries: int
    """Entries in the journal."""
    seed: str
    """The random seed used, and where it came from."""
    recorded_commands: tuple[str, ...] = ()
    """For a divergence: the journal's commands by command index, 0 to `index` ("input", "run weather"). The
    SDK checks each replayed command against the journal, so the code attempted the same ones up to
    `index - 1`, then `attempted`. Empty for the other verdicts."""

    @property
    def attempted_commands(self) -> tuple[str, ...]:
        """For a divergence: what the code attempted by command index, 0 to `index`."""
        if self.verdict != "diverges" or self.index is None or self.attempted is None:
            return ()
        return (*self.recorded_commands[: self.index], self.attempted)

    @property
    def ok(self) -> bool:
        """The journal replays, or replays and continues."""
        return self.verdict in ("replays", "continues")

    @property
    def calls_during_replay(self) -> int:
        """Model calls production pays for again on every replay of this journal."""
        return sum(1 for call in self.outside_calls if call.during_replay)

    def describe(self) -> str:
        """The verdict in one line."""
        name = self.path or self.invocation_id
        if self.verdict == "diverges":
            return (
                f"{name}: diverges at index {self.index}: {self.recorded} recorded, "
                f"{self.attempted} attempted"
            )
        if self.verdict == "continues":
            return f"{name}: continues; next, live: {self.next_command}"
        if self.verdict in ("fails", "undecided"):
            return f"{name}: {self.verdict}: {self.message.splitlines()[0] if self.message else ''}"
        return f"{name}: replays"


# -- loading the app --------------------------------------------------------------------------------------


def load_app(target: str, *, app_dir: str | Path | None = None) -> Any:
    """Import MODULE:APP (from `app_dir` if given); AppError in one line if it does not import."""
    module_name, _, attribute = target.partition(":")
    if not module_name:
        raise AppError(f"{target!r} is not MODULE:APP")
    if app_dir is not None:
        directory = str(Path(app_dir).resolve())
        if not Path(directory).is_dir():
            raise AppError(f"--app-dir {app_dir} is not a directory")
        if directory not in sys.path:
            sys.path.insert(0, directory)
    try:
        module = importlib.import_module(module_name)
    except Exception as err:  # noqa: BLE001 - the user's import fails in any way it likes
        raise AppError(f"cannot import {module_name}: {type(err).__name__}: {err}") from None
    app = getattr(module, attribute or "app", None)
    if app is None or not callable(app):
        raise AppError(f"module {module_name} has no Restate app {attribute or 'app'!r}")
    return app


# -- routing the code's HTTP requests during a replay -----------------------------------------------------


_MODEL_PATHS = ("/chat/completions",)


class _Stop(Exception):
    """Raised inside the handler to end a replay at a step or request that must not run."""


@dataclass
class _Replay:
    """The state of one replay in progress, visible to the patched clients through a context variable."""

    lane: Lane
    """The stub lane this replay's model calls go to."""
    invocation_id: str
    """The journal's invocation (the ledger counts the lane's calls under it)."""
    stub_app: Any
    """The stub model's ASGI app."""
    loop: asyncio.AbstractEventLoop
    """The loop the replay runs on."""
    stopped: asyncio.Event
    """Set when the replay must end: a step or request that must not run was reached."""
    released: threading.Event
    """Set when the replay is over, releasing a sync step action held on an executor thread."""
    calls: list[OutsideCall] = dataclasses.field(default_factory=list)
    """Model calls made so far."""
    stop_reason: str | None = None
    """What was stopped ("run weather", "HTTP GET ..."), if anything."""
    stop_while_replaying: bool = False
    """Whether the stop came while recorded entries were still being replayed."""
    stop_step: bool = False
    """Whether a step action was stopped (rather than an HTTP request)."""

    def stop(self, reason: str, *, replaying: bool, step: bool) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
            self.stop_while_replaying = replaying
            self.stop_step = step
        self.loop.call_soon_threadsafe(self.stopped.set)


_CURRENT: contextvars.ContextVar[_Replay | None] = contextvars.ContextVar("paidtwice_replay", default=None)


def _replaying() -> bool:
    """Whether the SDK is still replaying recorded entries for the current handler."""
    from restate.server_context import current_context

    try:
        ctx = current_context()
    except LookupError:
        return False
    vm = getattr(ctx, "vm", None)
    return bool(vm.is_replaying()) if vm is not None else False


def _route(replay: _Replay, request: Any) -> bool:
    """Point a model request at the replay's stub lane; False for any other request (not to be sent)."""
    path = str(request.url.path)
    if not path.endswith(_MODEL_PATHS):
        return False
    import httpx

    original = str(request.url)
    target = httpx.URL(replay.lane.base_url + "/chat/completions")
    request.url = target
    request.headers["host"] = target.netloc.decode()
    request.headers[INVOCATION_HEADER] = replay.invocation_id
    request.extensions["paidtwice_original_url"] = original
    return True


def _record_call(replay: _Replay, request: Any, replaying: bool) -> None:
    calls = replay.lane.model_calls(replay.invocation_id)
    last = calls[-1] if calls else None
    replay.calls.append(
        OutsideCall(
            number=len(replay.calls) + 1,
            url=str(request.extensions.get("paidtwice_original_url", request.url)),
            turn=last.turn if last else 0,
            ask=last.ask + 1 if last else 0,
            answer=last.answer.summary() if last else "",
            during_replay=replaying,
        )
    )


def _blocked(replay: _Replay, request: Any, replaying: bool) -> None:
    where = "outside the journal" if replaying else "past the journal's end"
    replay.stop(
        f"HTTP {request.method} {request.url} {where} (not sent: only model requests go to the stub)",
        replaying=replaying,
        step=False,
    )


def _patch_http_clients() -> None:
    for name in ("httpx", "httpx2"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        if getattr(module.AsyncClient.send, "_paidtwice_replay", False):
            continue
        async_send, sync_send = module.AsyncClient.send, module.Client.send

        async def send_async(
            self: Any, request: Any, _send: Any = async_send, _module: Any = module, **kwargs: Any
        ) -> Any:
            replay = _CURRENT.get()
            if replay is None:
                return await _send(self, request, **kwargs)
            replaying = _replaying()
            if not _route(replay, request):
                _blocked(replay, request, replaying)
                await asyncio.Event().wait()
            # Straight into the stub's ASGI app on this loop: the same stub, without a socket in between,
            # through the client module's own transport (httpx2's requests are not httpx's).
            transport = _module.ASGITransport(app=replay.stub_app)
            response = await transport.handle_async_request(request)
            response.request = request
            await response.aread()
            _record_call(replay, request, replaying)
            return response

        def send_sync(self: Any, request: Any, _send: Any = sync_send, **kwargs: Any) -> Any:
            replay = _CURRENT.get()
            if replay is None:
                return _send(self, request, **kwargs)
            replaying = _replaying()
            if not _route(replay, request):
                # Raised at once: a sync client may be called on the event loop's own thread.
                _blocked(replay, request, replaying)
                raise _Stop("replay ended")
            response = _send(self, request, **kwargs)
            _record_call(replay, request, replaying)
            return response

        send_async._paidtwice_replay = True  # type: ignore[attr-defined]
        module.AsyncClient.send = send_async
        module.Client.send = send_sync


class _DuringReplay(logging.Filter):
    """Drops the SDK's own log lines about a replay (a mismatch is logged with its traceback): the verdict
    reports it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return _CURRENT.get() is None


def _quiet_sdk_logs() -> None:
    import restate  # noqa: F401 - its modules create their loggers on import

    names = [name for name in logging.root.manager.loggerDict if name.split(".")[0] == "restate"]
    for name in names:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DuringReplay) for f in logger.filters):
            logger.addFilter(_DuringReplay())


# -- stopping step actions past the journal's end ---------------------------------------------------------


def _guarded(name: str, action: Callable[..., Any]) -> Callable[..., Any]:
    """The step's action, never executed during an offline replay (the SDK calls it only to run it live)."""

    def stop(replay: _Replay) -> None:
        replaying = _replaying()
        reason = f"run {name}".strip()
        replay.stop(reason, replaying=replaying, step=True)

    if inspect.iscoroutinefunction(action):

        @functools.wraps(action)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            replay = _CURRENT.get()
            if replay is None:
                return await action(*args, **kwargs)
            stop(replay)
            await asyncio.Event().wait()

        return run_async

    @functools.wraps(action)
    def run_sync(*args: Any, **kwargs: Any) -> Any:
        replay = _CURRENT.get()
        if replay is None:
            return action(*args, **kwargs)
        stop(replay)
        replay.released.wait()
        raise _Stop("replay ended")

    return run_sync


def _patch_steps() -> None:
    from restate.server_context import ServerInvocationContext as Ctx

    if getattr(Ctx.run, "_paidtwice_replay", False):
        return
    original_run, original_run_typed = Ctx.run, Ctx.run_typed

    def guard(original: Callable[..., Any]) -> Callable[..., Any]:
        def run(self: Any, name: str, action: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            if _CURRENT.get() is not None:
                action = _guarded(name, action)
            return original(self, name, action, *args, **kwargs)

        run._paidtwice_replay = True  # type: ignore[attr-defined]
        return run

    setattr(Ctx, "run", guard(original_run))  # noqa: B010 - mypy refuses a method assignment
    setattr(Ctx, "run_typed", guard(original_run_typed))  # noqa: B010


# -- the stub's answers on a replay -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Reasked(Script):
    """A script answering each ask as the next one: the recorded run asked every turn once already."""

    base: Script | None = None
    """The script it shifts."""

    def answer(self, *, turn: int, ask: int, call: int, model_up: bool = True) -> Answer:
        assert self.base is not None
        return self.base.answer(turn=turn, ask=ask + 1, call=call + 1, model_up=model_up)


def resolve_script(script: str | Path | Script, variation: str = "steady") -> Script:
    """A stub script by name (steady, drifting, changed, ...) or from a script file (in one variation)."""
    if isinstance(script, Script):
        return script
    text = str(script)
    if text in SCRIPTS:
        return SCRIPTS[text]
    path = Path(text)
    if path.suffix in (".toml", ".json") or path.exists():
        if variation not in VARIATIONS:
            raise UsageError(f"unknown variation {variation!r} (known: {', '.join(VARIATIONS)})")
        return load_script_file(path, variation)
    raise UsageError(f"--script {text!r} is neither a stub script ({', '.join(SCRIPTS)}) nor a script file")


def replay_script(script: Script) -> Script:
    """The script as a replay hears it: every ask one later than the recorded run's."""
    return _Reasked(name=f"{script.name} (replayed)", description=script.description, base=script)


# -- the replayer -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Outcome:
    """What one replay produced, before it is judged."""

    frames: tuple[Frame, ...]
    """Every protocol message the SDK sent."""
    replay: _Replay
    """The replay's state at its end (calls, what was stopped)."""
    timed_out: bool
    """The replay took longer than the replayer's timeout."""
    crashed: str | None
    """The SDK's ASGI app raised (its exception, in one line)."""


class Replayer:
    """Replays journals against one app's code, in this process; a context manager (it runs a stub)."""

    def __init__(
        self,
        app: Any,
        *,
        app_dir: str | Path | None = None,
        script: str | Path | Script = "steady",
        variation: str = "steady",
        timeout: float = DEFAULT_TIMEOUT,
        stub: StubModel | None = None,
    ) -> None:
        self.script = replay_script(resolve_script(script, variation))
        """How the stub answers the code's model calls (each ask one later than the recorded run's)."""
        self.timeout = timeout
        """Seconds one replay may take."""
        self._stub = stub
        self._own_stub = stub is None
        self._target = app if isinstance(app, str) else None
        self._app_dir = app_dir
        self._app: Any = None if isinstance(app, str) else app
        self._handlers: dict[str, set[str]] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._prepared = False
        self._saved_env: dict[str, str | None] = {}

    # -- lifecycle

    def __enter__(self) -> Replayer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> Replayer:
        return await self.start_async()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _prepare(self) -> StubModel:
        """The stub, the environment, the app and the patches; all but asking the app for its services."""
        if self._stub is None:
            self._stub = StubModel().start()
        if self._prepared:
            return self._stub
        # A client the app makes at import reads these: make sure even that one talks to the stub.
        self._saved_env = {name: os.environ.get(name) for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
        os.environ["OPENAI_BASE_URL"] = self._stub.open_lane(self.script, name="replay-import").base_url
        os.environ.setdefault("OPENAI_API_KEY", "paidtwice-stub")
        if self._app is None:
            assert self._target is not None
            self._app = load_app(self._target, app_dir=self._app_dir)
        _patch_http_clients()
        _patch_steps()
        _quiet_sdk_logs()
        self._prepared = True
        return self._stub

    def start(self) -> Replayer:
        """Start the stub and load the app; `with Replayer(...)` does it (`async with` on a running loop)."""
        if self._handlers is None:
            self._prepare()
            self._loop = self._loop or asyncio.new_event_loop()
            self._handlers = self._loop.run_until_complete(self._discover())
        return self

    async def start_async(self) -> Replayer:
        """As `start`, on the caller's running event loop."""
        if self._handlers is None:
            self._prepare()
            self._handlers = await self._discover()
        return self

    def close(self) -> None:
        if self._loop is not None:
            self._loop.close()
            self._loop = None
        for name, value in self._saved_env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved_env = {}
        self._prepared = False
        self._handlers = None
        if self._own_stub and self._stub is not None:
            self._stub.stop()
            self._stub = None

    @property
    def services(self) -> dict[str, set[str]]:
        """The app's services and their handlers, as its endpoint's discovery lists them."""
        if self._handlers is None:
            self.start()
        assert self._handlers is not None
        return self._handlers

    async def _discover(self) -> dict[str, set[str]]:
        status, body = await self._request(
            "GET", "/discover", [("accept", "application/vnd.restate.endpointmanifest.v5+json")], b""
        )
        if status != 200:
            raise AppError(
                f"the app did not answer Restate's discovery (HTTP {status}): "
                f"{body[:200].decode(errors='replace')}"
            )
        try:
            manifest = json.loads(body)
            return {s["name"]: {h["name"] for h in s.get("handlers", [])} for s in manifest["services"]}
        except (ValueError, KeyError, TypeError) as err:
            raise AppError(f"the app's discovery answer is not a Restate manifest: {err}") from None

    async def _request(
        self,
        method: str,
        path: str,
        headers: list[tuple[str, str]],
        body: bytes,
        *,
        on_body: Callable[[bytes], None] | None = None,
        done: asyncio.Event | None = None,
    ) -> tuple[int, bytes]:
        """One request to the app over ASGI; the input stays open (as the server's does) until `done`."""
        finished = done or asyncio.Event()
        sent = False
        status = 0
        chunks: list[bytes] = []

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await finished.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body":
                chunk = bytes(message.get("body", b""))
                chunks.append(chunk)
                if on_body is not None:
                    on_body(chunk)
                if not message.get("more_body", False):
                    finished.set()

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "2",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": [(k.encode(), v.encode()) for k, v in headers],
            "client": ("127.0.0.1", 0),
            "server": ("127.0.0.1", 0),
        }
        try:
            await self._app(scope, receive, send)
        finally:
            finished.set()
        return status, b"".join(chunks)

    # -- one journal

    def check(self, journal: JournalFile) -> None:
        """AppError if the app cannot replay this journal at all (service, handler, protocol version)."""
        services = self.services
        if journal.service not in services:
            found = ", ".join(sorted(services)) or "none"
            raise AppError(
                f"{_where(journal)} is a journal of service {journal.service!r}, which the app does not "
                f"have (services: {found})"
            )
        if journal.handler not in services[journal.service]:
            handlers = ", ".join(sorted(services[journal.service]))
            raise AppError(
                f"{_where(journal)}: service {journal.service!r} has no handler {journal.handler!r} "
                f"(handlers: {handlers})"
            )
        problem = _protocol_problem(journal.protocol_version)
        if problem is not None:
            raise AppError(
                f"{_where(journal)} is pinned to service protocol v{journal.protocol_version}, which "
                f"restate-sdk does not speak ({problem})"
            )
        for entry in journal.entries:
            try:
                entry_message_type(entry.type)
            except ValueError as err:
                raise AppError(f"{_where(journal)}: {err}") from None
        try:
            invocation_id_bytes(journal.invocation_id)
        except ValueError as err:
            raise AppError(f"{_where(journal)}: {err}") from None

    def replay_journal(
        self, journal: JournalFile | Path, *, raise_on_divergence: bool = True
    ) -> ReplayResult:
        """Replay one journal; raises ReplayDivergence if it does not replay (unless told not to)."""
        self.start()
        assert self._loop is not None
        return self._loop.run_until_complete(
            self.replay_journal_async(journal, raise_on_divergence=raise_on_divergence)
        )

    def replay_journals(
        self, journals: Iterable[JournalFile | Path], *, raise_on_divergence: bool = False
    ) -> list[ReplayResult]:
        """Replay every journal and collect the results (the first divergence raises only if told to)."""
        return [self.replay_journal(j, raise_on_divergence=raise_on_divergence) for j in journals]

    async def replay_journal_async(
        self, journal: JournalFile | Path, *, raise_on_divergence: bool = True
    ) -> ReplayResult:
        """As `replay_journal`, awaited on the caller's event loop (in an async test, say)."""
        if isinstance(journal, Path):
            journal = load_journal(journal)
        await self.start_async()
        self.check(journal)
        if journal.random_seed is not None:
            outcome = await self._run(journal, journal.random_seed)
            result = self._judge(journal, outcome, f"{journal.random_seed} ({journal.random_seed_source})")
        else:
            result = await self._unknown_seed(journal)
        if raise_on_divergence and not result.ok:
            raise ReplayDivergence(result)
        return result

    async def replay_journals_async(
        self, journals: Iterable[JournalFile | Path], *, raise_on_divergence: bool = False
    ) -> list[ReplayResult]:
        """As `replay_journals`, awaited on the caller's event loop."""
        return [await self.replay_journal_async(j, raise_on_divergence=raise_on_divergence) for j in journals]

    async def _unknown_seed(self, journal: JournalFile) -> ReplayResult:
        # The server's seed is unknown: replay with two seeds. If both agree the seed does not matter here.
        first_seed = random_seed(journal.invocation_id)
        first = self._judge(journal, await self._run(journal, first_seed), "unknown")
        second = self._judge(journal, await self._run(journal, first_seed ^ _OTHER_SEED_MASK), "unknown")

        def key(result: ReplayResult) -> tuple[Any, ...]:
            return (result.verdict, result.index, result.attempted, result.next_command)

        if key(first) == key(second):
            return dataclasses.replace(first, seed=f"unknown ({journal.random_seed_source}); two seeds agree")
        return dataclasses.replace(
            first,
            verdict="undecided",
            message=f"the outcome depends on the random seed, which the journal does not have "
            f"({journal.random_seed_source}): {first.describe()} with one seed, {second.describe()} with "
            "another",
            seed=f"unknown ({journal.random_seed_source})",
        )

    async def _run(self, journal: JournalFile, seed: int) -> _Outcome:
        lane = self._prepare().open_lane(self.script)
        return await self._replay(journal, seed, lane)

    async def _replay(self, journal: JournalFile, seed: int, lane: Lane) -> _Outcome:
        loop = asyncio.get_running_loop()
        replay = _Replay(
            lane=lane,
            invocation_id=journal.invocation_id,
            stub_app=lane.stub.asgi_app,
            loop=loop,
            stopped=asyncio.Event(),
            released=threading.Event(),
        )
        body = start_message(
            raw_id=invocation_id_bytes(journal.invocation_id),
            debug_id=journal.invocation_id,
            known_entries=len(journal.entries),
            key=journal.key,
            random_seed=seed,
        ) + b"".join(frame(entry_message_type(e.type), e.raw) for e in journal.entries)
        done = asyncio.Event()
        stream = bytearray()
        token = _CURRENT.set(replay)
        try:
            call = asyncio.ensure_future(
                self._request(
                    "POST",
                    f"/invoke/{journal.service}/{journal.handler}",
                    _content_type(journal),
                    body,
                    on_body=stream.extend,
                    done=done,
                )
            )
        finally:
            _CURRENT.reset(token)
        stopped = asyncio.ensure_future(replay.stopped.wait())
        finished, _ = await asyncio.wait({call, stopped}, timeout=self.timeout, return_when="FIRST_COMPLETED")
        crashed: str | None = None
        if call in finished and call.exception() is not None:
            error = call.exception()
            crashed = f"{type(error).__name__}: {error}"
        replay.released.set()
        done.set()
        for task in (call, stopped):
            if not task.done():
                task.cancel()
        await asyncio.gather(call, stopped, return_exceptions=True)
        return _Outcome(tuple(read_frames(bytes(stream))), replay, not finished, crashed)

    def _judge(self, journal: JournalFile, outcome: _Outcome, seed: str) -> ReplayResult:
        replay = outcome.replay
        frames = outcome.frames
        new_commands = [f for f in frames if is_command(f.type)]
        errors = [f for f in frames if f.type == ERROR]
        base = ReplayResult(
            path=str(journal.path) if journal.path else None,
            invocation_id=journal.invocation_id,
            service=journal.service,
            handler=journal.handler,
            verdict="fails",
            index=None,
            recorded=None,
            attempted=None,
            labels_agree=None,
            message="",
            next_command=None,
            outside_calls=tuple(replay.calls),
            past_end=_past_end(replay),
            entries=len(journal.entries),
            seed=seed,
        )

        def verdict(**changes: Any) -> ReplayResult:
            return dataclasses.replace(base, **changes)

        # Whatever the SDK sends after a stop (an error about the step or request cut short) follows from the
        # stop: the stop is the outcome. A mismatch is found before the code runs on, so it never follows one.
        if replay.stop_reason is not None:
            if replay.stop_while_replaying and not replay.stop_step:
                return verdict(verdict="undecided", message=replay.stop_reason)
            if new_commands:
                next_command = message_label(new_commands[0])
            elif replay.stop_step:
                next_command = f"{replay.stop_reason} (again: its command is journaled without a result)"
            else:
                next_command = replay.stop_reason
            return verdict(verdict="continues", next_command=next_command, message=replay.stop_reason)
        if errors:
            fields = read_fields(errors[0].body)
            raw_code = fields.get(1, 0)
            code = raw_code if isinstance(raw_code, int) else 0
            text = fields.get(2, b"")
            message = text.decode(errors="replace") if isinstance(text, bytes) else ""
            mismatch = read_mismatch(message, journal.journal()) if code == MISMATCH_ERROR_CODE else None
            if mismatch is not None:
                return verdict(
                    verdict="diverges",
                    index=mismatch.index,
                    recorded=mismatch.recorded,
                    attempted=mismatch.attempted,
                    labels_agree=mismatch.labels_agree,
                    message=message,
                    recorded_commands=_commands(journal)[: mismatch.index + 1],
                )
            return verdict(verdict="fails", message=f"error {code}: {message}")
        if outcome.timed_out:
            return verdict(verdict="undecided", message=f"the replay took over {self.timeout:g}s")
        if outcome.crashed is not None:
            return verdict(verdict="fails", message=outcome.crashed)
        if new_commands:
            return verdict(verdict="continues", next_command=message_label(new_commands[0]))
        if any(f.type == SUSPENSION for f in frames):
            waiting = _last_command(journal)
            return verdict(verdict="continues", next_command=f"wait for the completion of {waiting}")
        if any(f.type == END for f in frames):
            if journal.complete:
                return verdict(verdict="replays")
            return verdict(verdict="continues", next_command="end")
        return verdict(verdict="fails", message="the SDK ended the attempt without an outcome")


@functools.cache
def _protocol_problem(version: int) -> str | None:
    """Why the SDK's core refuses protocol `version` (asked of the core itself), None if it speaks it."""
    from restate.vm import VMWrapper

    try:
        VMWrapper([("content-type", f"application/vnd.restate.invocation.v{version}")]).get_response_head()
    except Exception as err:  # noqa: BLE001 - the SDK's core raises its own exception type
        return str(err).split(". ")[0]
    return None


def _content_type(journal: JournalFile) -> list[tuple[str, str]]:
    return [("content-type", f"application/vnd.restate.invocation.v{journal.protocol_version}")]


def _where(journal: JournalFile) -> str:
    return f"journal {journal.path}" if journal.path else f"journal of {journal.invocation_id}"


def _command_label(entry_type: str, name: str) -> str:
    # As the journal reader labels an entry ("run weather", "sleep", "input").
    return f"{entry_type.split(':', 1)[1].strip().lower()} {name}".strip()


def _commands(journal: JournalFile) -> tuple[str, ...]:
    """The journal's commands by command index (the index an SDK mismatch names)."""
    return tuple(_command_label(e.type, e.name) for e in journal.entries if e.type.startswith("Command:"))


def _last_command(journal: JournalFile) -> str:
    for entry in reversed(journal.entries):
        if entry.type.startswith("Command:"):
            return _command_label(entry.type, entry.name)
    return "the input"


def _past_end(replay: _Replay) -> str:
    calls = sum(1 for call in replay.calls if not call.during_replay)
    parts = []
    if replay.stop_reason is not None and replay.stop_step:
        parts.append(f"stopped before step '{replay.stop_reason.removeprefix('run ')}' executed")
    elif replay.stop_reason is not None:
        parts.append(f"stopped at {replay.stop_reason}")
    if calls:
        parts.append(f"{count(calls, 'model call')} answered by the stub")
    return "; ".join(parts) or "nothing past the journal's end ran"


def kept_journal_judge(
    replayer: Replayer, journal: JournalFile, code: str
) -> Callable[[int], tuple[str, int | None]]:
    """For `paidtwice recover`: whether `code` replays `journal` kept up to an entry index, judged by
    replaying that prefix offline (the verdict, and the index of a certain mismatch)."""

    def judge(last_index: int) -> tuple[str, int | None]:
        result = replayer.replay_journal(journal.prefix(last_index), raise_on_divergence=False)
        calls = f"{count(result.calls_during_replay, 'model call')} outside the journal paid again"
        if result.verdict == "diverges":
            return (
                f"CERTAIN MISMATCH at index {result.index}: replayed offline on {code}, the journal has "
                f"{result.recorded}, the code attempts {result.attempted} ({calls})",
                result.index,
            )
        if result.ok:
            return (
                f"replays: replayed offline on {code}, then {result.next_command or 'done'} ({calls})",
                None,
            )
        return f"unknown: the offline replay on {code} {result.verdict}: {result.message[:200]}", None

    return judge
