"""Replay captured journals against code, in-process, with no restate-server: will this code replay them?

    with Replayer("agent:app", script="steady") as replayer:
        result = replayer.replay_journal(load_journal(Path("inv_1a2b.json")))  # raises ReplayDivergence
        results = replayer.replay_journals(journals)                           # a batch: a result each
    for result in replayer.replay_stream(paths):                             # thousands of files
        print(result.verdict)

Each journal is fed to the app's real, unchanged restate-sdk endpoint (its ASGI app, called in-process) as
the server opens an attempt: a StartMessage with `known_entries` and the random seed, then every recorded
entry. The verdict (replays, diverges, continues, fails, undecided: docs/how-to/replay-check.md) is read from
the frames the SDK answers with. A batch shares one event loop, app and stub model, each journal on a stub
lane of its own, so each gets the result it would get alone; a stream reads its journals a chunk at a time,
so memory does not grow with their number. Nothing reaches a real model or tool: model requests go to the
stub's script (one made while the journal replays is a second ask of its turn), and past the journal's end
no step runs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import importlib
import json
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from paidtwice._words import count, error_line
from paidtwice.agent import OFFLINE_DEFAULTS, endpoint_of, load_problem
from paidtwice.agent import load_app as served_app
from paidtwice.replay._answers import replay_script
from paidtwice.replay._intercept import CURRENT, ReplayState, install_patches
from paidtwice.replay._journal import JournalFile, load_journal
from paidtwice.replay._patience import STALLED_AFTER, replay_timeout, wait_settled
from paidtwice.replay._protocol import entry_message_type, frame, read_frames, start_message
from paidtwice.replay._results import (
    VERDICTS,
    AppError,
    OutsideCall,
    ReplayDivergence,
    ReplayResult,
)
from paidtwice.replay._seed import invocation_id_bytes, random_seed
from paidtwice.replay._verdict import Outcome, judge
from paidtwice.stub import Script, StubModel, resolve_script

if TYPE_CHECKING:
    from paidtwice.targets import Target

__all__ = [
    "VERDICTS",
    "AppError",
    "OutsideCall",
    "ReplayDivergence",
    "ReplayResult",
    "Replayer",
    "kept_journal_judge",
    "load_app",
    "replay_script",
]

DEFAULT_CONCURRENCY = 8
"""Journals of a batch replayed side by side: the loop's turns are shared among them (about 1.4x fewer CPU
seconds per journal than one at a time, bench/replay_check.py)."""
STREAM_CHUNK = 64
"""Journals a stream reads and replays at a time: enough to keep `concurrency` side by side, few enough that
memory does not grow with the number of journals."""
_OTHER_SEED_MASK = 0x9E3779B97F4A7C15
"""XORed into a seed to get a second, different one: an unknown seed is tried two ways."""


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
        # First on the path, and no module of that name cached from elsewhere: two apps with one module name
        # (each project's `agent`) checked in one process must each be their own.
        if directory in sys.path:
            sys.path.remove(directory)
        sys.path.insert(0, directory)
        _forget_unless_under(module_name, Path(directory))
    try:
        module = importlib.import_module(module_name)
    except Exception as err:  # noqa: BLE001 - the user's import fails in any way it likes
        raise AppError(f"cannot import {module_name}: {error_line(err)}") from None
    if not attribute:
        return _the_app(module, module_name)
    app = getattr(module, attribute, None)
    if app is None or not callable(app):
        raise AppError(f"module {module_name} has no Restate app {attribute!r}")
    return app


def _the_app(module: Any, module_name: str) -> Any:
    """MODULE without :APP, found as the sweep's discovery finds it: the one Restate app the module's
    globals hold, else an app of every Restate service they hold (`paidtwice.agent._app.load_app`);
    AppError in one line when it holds none, or more than one app."""
    apps = [name for name, value in vars(module).items() if callable(value) and endpoint_of(value)]
    if len(apps) > 1:
        held = f"{len(apps)} Restate apps ({', '.join(apps)})"
        raise AppError(f"module {module_name} holds {held}: name one, {module_name}:APP")
    if apps:
        return getattr(module, apps[0])
    problem = load_problem(module_name)
    if problem is not None:
        raise AppError(problem)
    return served_app(module_name)


def _forget_unless_under(module_name: str, directory: Path) -> None:
    """Drop a cached top-level module (and its submodules) of that name that was imported from elsewhere."""
    top = module_name.split(".")[0]
    cached = sys.modules.get(top)
    origin = getattr(cached, "__file__", None)
    if cached is None or origin is None or Path(origin).resolve().is_relative_to(directory):
        return
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]


# -- the replayer ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Feed:
    """A journal checked against the app and framed once, for each of its replays."""

    journal: JournalFile
    """The journal."""
    raw_id: bytes
    """Its invocation id as the StartMessage carries it."""
    entries: bytes
    """Every recorded entry, framed as a protocol message."""

    @property
    def path(self) -> str:
        return f"/invoke/{self.journal.service}/{self.journal.handler}"

    @property
    def headers(self) -> list[tuple[str, str]]:
        return [("content-type", f"application/vnd.restate.invocation.v{self.journal.protocol_version}")]

    def body(self, seed: int) -> bytes:
        """The request body: a StartMessage with this seed, then the entries."""
        journal = self.journal
        start = start_message(
            raw_id=self.raw_id,
            debug_id=journal.invocation_id,
            known_entries=len(journal.entries),
            key=journal.key,
            random_seed=seed,
        )
        return start + self.entries


class Replayer:
    """Replays journals against one app's code, in this process; a context manager (it runs a stub).

    Built from a target (`Replayer.of(target)`, as the sweep and the soak take one), or from the app itself:
    MODULE:APP, MODULE, or the app object."""

    def __init__(
        self,
        app: Any,
        *,
        app_dir: str | Path | None = None,
        script: str | Path | Script = "steady",
        variation: str = "steady",
        timeout: float | None = None,
        stalled_after: float = STALLED_AFTER,
        stub: StubModel | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.script = replay_script(resolve_script(script, variation))
        """How the stub answers the code's model calls (each ask one later than the recorded run's)."""
        self.timeout = timeout if timeout is not None else replay_timeout()
        """Seconds one replay may take in all, however busy the machine (`PAIDTWICE_REPLAY_TIMEOUT`)."""
        self.stalled_after = stalled_after
        """Seconds of a replay's loop doing nothing after which the replay is stuck."""
        self.concurrency = max(1, concurrency)
        """Journals of a batch replayed side by side on the loop (each on its own stub lane)."""
        self._stub = stub
        self._own_stub = stub is None
        self._target = app if isinstance(app, str) else None
        self._app_dir = app_dir
        self._app: Any = None if isinstance(app, str) else app
        self._handlers: dict[str, set[str]] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._prepared = False
        self._env = dict(env or {})
        self._saved_env: dict[str, str | None] = {}

    @classmethod
    def of(
        cls,
        target: Target,
        *,
        script: str | Path | Script = "steady",
        variation: str = "steady",
        timeout: float | None = None,
        stub: StubModel | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> Replayer:
        """A replayer of the code `target` runs (`paidtwice.targets`): its app, imported from its directory
        under its environment; `UsageError` in one line for a target paidtwice cannot import (a command)."""
        app = target.offline()
        return cls(
            app.app,
            app_dir=app.app_dir,
            script=script,
            variation=variation,
            timeout=timeout,
            stub=stub,
            concurrency=concurrency,
            env=dict(app.env),
        )

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
        # A client the app makes at import reads these: make sure even that one talks to the stub. The
        # agent environment's offline defaults keep the app's libraries quiet and off the network here too
        # (a tracing exporter flushing at exit would otherwise print into replay-check's output).
        names = ("OPENAI_BASE_URL", "OPENAI_API_KEY", *OFFLINE_DEFAULTS, *self._env)
        self._saved_env = {name: os.environ.get(name) for name in names}
        os.environ.update(self._env)
        os.environ["OPENAI_BASE_URL"] = self._stub.open_lane(self.script, name="replay-import").base_url
        os.environ.setdefault("OPENAI_API_KEY", "paidtwice-stub")
        for name, default in OFFLINE_DEFAULTS.items():
            os.environ.setdefault(name, default)
        if self._app is None:
            assert self._target is not None
            self._app = load_app(self._target, app_dir=self._app_dir)
        install_patches()
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

    # -- checking journals before any replay

    def check(self, journal: JournalFile) -> None:
        """AppError if the app cannot replay this journal at all (service, handler, protocol version)."""
        self._feed(journal)

    def _feed(self, journal: JournalFile) -> _Feed:
        """The journal checked against the app and framed for it: AppError if it cannot be replayed."""
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
        try:
            entries = b"".join(frame(entry_message_type(e.type), e.raw) for e in journal.entries)
            raw_id = invocation_id_bytes(journal.invocation_id)
        except ValueError as err:
            raise AppError(f"{_where(journal)}: {err}") from None
        return _Feed(journal, raw_id, entries)

    # -- replaying

    def replay_journal(
        self, journal: JournalFile | Path, *, raise_on_divergence: bool = True
    ) -> ReplayResult:
        """Replay one journal; raises ReplayDivergence if it does not replay (unless told not to)."""
        return self.replay_journals([journal], raise_on_divergence=raise_on_divergence)[0]

    def replay_journals(
        self, journals: Iterable[JournalFile | Path], *, raise_on_divergence: bool = False
    ) -> list[ReplayResult]:
        """Replay a batch: every journal is loaded and checked first (AppError before any replay), then
        replayed on this replayer's loop, `concurrency` at a time; a result per journal, in order. With
        `raise_on_divergence`, the first that does not replay raises ReplayDivergence."""
        self.start()
        assert self._loop is not None
        return self._loop.run_until_complete(
            self.replay_journals_async(journals, raise_on_divergence=raise_on_divergence)
        )

    def replay_stream(self, journals: Iterable[JournalFile | Path]) -> Iterator[ReplayResult]:
        """Replay journals as they come, `STREAM_CHUNK` read at a time: a result per journal, in order.
        A journal that cannot be read or replayed raises (JournalFileError, AppError) when its chunk is
        reached, after the results before it: `check` them first to refuse a batch before any replay."""
        self.start()
        assert self._loop is not None
        chunk: list[JournalFile | Path] = []
        for journal in journals:
            chunk.append(journal)
            if len(chunk) == STREAM_CHUNK:
                yield from self._loop.run_until_complete(self.replay_journals_async(chunk))
                chunk = []
        if chunk:
            yield from self._loop.run_until_complete(self.replay_journals_async(chunk))

    async def replay_journal_async(
        self, journal: JournalFile | Path, *, raise_on_divergence: bool = True
    ) -> ReplayResult:
        """As `replay_journal`, awaited on the caller's event loop (in an async test, say)."""
        results = await self.replay_journals_async([journal], raise_on_divergence=raise_on_divergence)
        return results[0]

    async def replay_journals_async(
        self, journals: Iterable[JournalFile | Path], *, raise_on_divergence: bool = False
    ) -> list[ReplayResult]:
        """As `replay_journals`, awaited on the caller's event loop."""
        await self.start_async()
        loaded = [load_journal(j) if isinstance(j, Path) else j for j in journals]
        results = await self._replay_feeds([self._feed(journal) for journal in loaded])
        if raise_on_divergence:
            for result in results:
                if not result.ok:
                    raise ReplayDivergence(result)
        return results

    async def _replay_feeds(self, feeds: Sequence[_Feed]) -> list[ReplayResult]:
        if len(feeds) == 1 or self.concurrency == 1:
            return [await self._replay_feed(feed) for feed in feeds]
        results: list[ReplayResult | None] = [None] * len(feeds)
        queue = iter(enumerate(feeds))

        async def worker() -> None:
            # The workers share the queue: each takes the next journal as soon as it is free.
            for number, feed in queue:
                results[number] = await self._replay_feed(feed)

        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(min(self.concurrency, len(feeds))):
                    group.create_task(worker())
        except BaseExceptionGroup as failed:
            raise failed.exceptions[0] from None  # as one journal at a time raises it
        return [result for result in results if result is not None]

    async def _replay_feed(self, feed: _Feed) -> ReplayResult:
        journal = feed.journal
        if journal.random_seed is None:
            return await self._unknown_seed(feed)
        outcome = await self._replay(feed, journal.random_seed)
        return judge(journal, outcome, f"{journal.random_seed} ({journal.random_seed_source})")

    async def _unknown_seed(self, feed: _Feed) -> ReplayResult:
        # The server's seed is unknown: replay with two seeds. If both agree the seed does not matter here.
        journal = feed.journal
        first_seed = random_seed(journal.invocation_id)
        first = judge(journal, await self._replay(feed, first_seed), "unknown")
        second = judge(journal, await self._replay(feed, first_seed ^ _OTHER_SEED_MASK), "unknown")

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

    async def _replay(self, feed: _Feed, seed: int) -> Outcome:
        """One attempt of the journal on the app: the SDK's frames, and what the replay stopped."""
        loop = asyncio.get_running_loop()
        assert self._stub is not None
        replay = ReplayState(
            stub=self._stub,
            script=self.script,
            invocation_id=feed.journal.invocation_id,
            loop=loop,
            settled=loop.create_future(),
            released=threading.Event(),
        )
        done = asyncio.Event()
        stream = bytearray()
        request = self._request(
            "POST", feed.path, feed.headers, feed.body(seed), on_body=stream.extend, done=done
        )
        token = CURRENT.set(replay)
        try:
            call = loop.create_task(request)  # the task keeps this context: the patches see the replay
        finally:
            CURRENT.reset(token)
        call.add_done_callback(lambda _: replay.settle())
        given_up = await wait_settled(replay.settled, timeout=self.timeout, stalled_after=self.stalled_after)
        crashed: str | None = None
        if call.done() and not call.cancelled() and call.exception() is not None:
            error = call.exception()
            crashed = f"{type(error).__name__}: {error}"
        replay.released.set()
        done.set()
        if not call.done():
            call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        return Outcome(tuple(read_frames(bytes(stream))), replay, given_up, crashed)


@functools.cache
def _protocol_problem(version: int) -> str | None:
    """Why the SDK's core refuses protocol `version` (asked of the core itself), None if it speaks it."""
    from restate.vm import VMWrapper

    try:
        VMWrapper([("content-type", f"application/vnd.restate.invocation.v{version}")]).get_response_head()
    except Exception as err:  # noqa: BLE001 - the SDK's core raises its own exception type
        return str(err).split(". ")[0]
    return None


def _where(journal: JournalFile) -> str:
    return f"journal {journal.path}" if journal.path else f"journal of {journal.invocation_id}"


def kept_journal_judge(
    replayer: Replayer, journal: JournalFile, code: str
) -> Callable[[int], tuple[str, int | None]]:
    """For `paidtwice recover`: whether `code` replays `journal` kept up to an entry index, judged by
    replaying that prefix offline (the verdict, and the index of a certain mismatch)."""

    def judge_prefix(last_index: int) -> tuple[str, int | None]:
        result = replayer.replay_journal(journal.prefix(last_index), raise_on_divergence=False)
        calls = f"{count(result.calls_during_replay, 'model call')} outside the journal paid again"
        if result.verdict == "diverges":
            return (
                f"CERTAIN MISMATCH at {result.where}: replayed offline on {code}, the journal has "
                f"{result.recorded}, the code attempts {result.attempted} ({calls})",
                result.index,
            )
        if result.ok:
            return (
                f"replays: replayed offline on {code}, then {result.next_command or 'done'} ({calls})",
                None,
            )
        return f"unknown: the offline replay on {code} {result.verdict}: {result.message[:200]}", None

    return judge_prefix
