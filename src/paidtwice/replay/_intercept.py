"""What an offline replay intercepts in the code under check: model requests (to the stub), any other HTTP
request (not sent), step actions past the journal's end (never executed), the SDK's own log lines.

The patches are installed once per process and act only inside a replay: the state of the replay in
progress travels in a context variable, so journals replayed side by side on one loop do not mix.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
import dataclasses
import functools
import importlib
import inspect
import logging
import threading
import urllib.parse
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from paidtwice.replay._results import OutsideCall
from paidtwice.stub import INVOCATION_HEADER, Lane, Script, StubModel

__all__ = ["CURRENT", "ReplayState", "install_patches", "is_replaying"]


def install_patches() -> None:
    """Patch the HTTP clients, the SDK's step actions and its loggers (once per process)."""
    _patch_http_clients()
    _patch_steps()
    _quiet_sdk_logs()


# -- routing the code's HTTP requests during a replay -----------------------------------------------------


_MODEL_PATHS = ("/chat/completions",)


class _Stop(Exception):
    """Raised inside the handler to end a replay at a step or request that must not run."""


@dataclass
class ReplayState:
    """The state of one replay in progress, visible to the patched clients through a context variable."""

    stub: StubModel
    """The stub model the replay's model calls go to."""
    script: Script
    """How the stub answers them."""
    invocation_id: str
    """The journal's invocation (the ledger counts the lane's calls under it)."""
    loop: asyncio.AbstractEventLoop
    """The loop the replay runs on."""
    settled: asyncio.Future[None]
    """Done when the replay must end: the SDK's answer is complete, or a step or request that must not run
    was reached."""
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
    _lane: Lane | None = None
    """The stub lane, once opened."""
    _lane_app: Any = None
    """The stub's ASGI app for that lane, once made."""

    def stop(self, reason: str, *, replaying: bool, step: bool) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
            self.stop_while_replaying = replaying
            self.stop_step = step
        self.loop.call_soon_threadsafe(self.settle)

    def settle(self) -> None:
        """Mark the replay as ended (on the replay's loop)."""
        if not self.settled.done():
            self.settled.set_result(None)

    def lane(self) -> Lane:
        """The stub lane of this replay, opened at its first model call (most replays make none)."""
        if self._lane is None:
            self._lane = self.stub.open_lane(self.script)
        return self._lane

    def lane_app(self) -> Any:
        """The stub's ASGI app serving this replay's lane whatever the request's URL: a request sent
        in-process keeps the URL the code gave it (no URL to parse again), only the path the stub reads
        is the lane's."""
        if self._lane_app is None:
            stub_app = self.stub.asgi_app
            path = urllib.parse.urlsplit(self.lane().base_url).path + "/chat/completions"
            raw_path = path.encode()

            async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
                await stub_app({**scope, "path": path, "raw_path": raw_path}, receive, send)

            self._lane_app = app
        return self._lane_app


CURRENT: contextvars.ContextVar[ReplayState | None] = contextvars.ContextVar("paidtwice_replay", default=None)


def is_replaying() -> bool:
    """Whether the SDK is still replaying recorded entries for the current handler."""
    from restate.server_context import current_context

    try:
        ctx = current_context()
    except LookupError:
        return False
    vm = getattr(ctx, "vm", None)
    return bool(vm.is_replaying()) if vm is not None else False


def _is_model_request(request: Any) -> bool:
    """Whether the request is a model call (the stub answers it); any other request is not sent."""
    return str(request.url.path).endswith(_MODEL_PATHS)


def _point_at_lane(replay: ReplayState, request: Any) -> None:
    """Send a model request over the network to the replay's stub lane (a sync client's request)."""
    import httpx

    original = str(request.url)
    target = httpx.URL(replay.lane().base_url + "/chat/completions")
    request.url = target
    request.headers["host"] = target.netloc.decode()
    request.extensions["paidtwice_original_url"] = original


def _record_call(replay: ReplayState, request: Any, replaying: bool) -> None:
    calls = replay.lane().model_calls(replay.invocation_id)
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


def _blocked(replay: ReplayState, request: Any, replaying: bool) -> None:
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
            replay = CURRENT.get()
            if replay is None:
                return await _send(self, request, **kwargs)
            replaying = is_replaying()
            if not _is_model_request(request):
                _blocked(replay, request, replaying)
                await asyncio.Event().wait()
            # Straight into the stub's ASGI app on this loop: the same stub, without a socket in between,
            # through the client module's own transport (httpx2's requests are not httpx's).
            request.headers[INVOCATION_HEADER] = replay.invocation_id
            transport = _module.ASGITransport(app=replay.lane_app())
            response = await transport.handle_async_request(request)
            response.request = request
            await response.aread()
            _record_call(replay, request, replaying)
            return response

        def send_sync(self: Any, request: Any, _send: Any = sync_send, **kwargs: Any) -> Any:
            replay = CURRENT.get()
            if replay is None:
                return _send(self, request, **kwargs)
            replaying = is_replaying()
            if not _is_model_request(request):
                # Raised at once: a sync client may be called on the event loop's own thread.
                _blocked(replay, request, replaying)
                raise _Stop("replay ended")
            request.headers[INVOCATION_HEADER] = replay.invocation_id
            _point_at_lane(replay, request)
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
        return CURRENT.get() is None


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

    def stop(replay: ReplayState) -> None:
        replaying = is_replaying()
        reason = f"run {name}".strip()
        replay.stop(reason, replaying=replaying, step=True)

    if inspect.iscoroutinefunction(action):

        @functools.wraps(action)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            replay = CURRENT.get()
            if replay is None:
                return await action(*args, **kwargs)
            stop(replay)
            await asyncio.Event().wait()

        return run_async

    @functools.wraps(action)
    def run_sync(*args: Any, **kwargs: Any) -> Any:
        replay = CURRENT.get()
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

    def run(self: Any, name: str, action: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if CURRENT.get() is not None:
            args, kwargs = _run_with_hint(action, args, kwargs)
            action = _guarded(name, action)
        return original_run(self, name, action, *args, **kwargs)

    def run_typed(self: Any, name: str, action: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if CURRENT.get() is not None:
            args = _run_typed_with_hint(action, args)
            action = _guarded(name, action)
        return original_run_typed(self, name, action, *args, **kwargs)

    run._paidtwice_replay = True  # type: ignore[attr-defined]
    setattr(Ctx, "run", run)  # noqa: B010 - mypy refuses a method assignment
    setattr(Ctx, "run_typed", run_typed)  # noqa: B010


# -- the step's return type, read once per function ---------------------------------------------------------
#
# With the default serde and no type hint, the SDK reads a step's return type on every call with
# `inspect.signature(action, eval_str=True)`: under `from __future__ import annotations` that evaluates the
# annotations each time, a quarter of the SDK's CPU in replaying the deck's agent. A replay hands the
# SDK the same return annotation, read once per function object; what the SDK does with it is unchanged.

_UNREAD = object()
_RETURN_HINTS: weakref.WeakKeyDictionary[Callable[..., Any], Any] = weakref.WeakKeyDictionary()


def _return_hint(action: Callable[..., Any]) -> Any:
    """`inspect.signature(action, eval_str=True).return_annotation`, as the SDK reads it; _UNREAD if that
    raises (the SDK then reads it itself and raises as it would)."""
    try:
        return _RETURN_HINTS[action]
    except (KeyError, TypeError):
        pass
    try:
        hint = inspect.signature(action, eval_str=True).return_annotation
    except Exception:  # noqa: BLE001 - whatever it is, the SDK raises it itself
        return _UNREAD
    with contextlib.suppress(TypeError):  # not weakly referenceable: read again next time
        _RETURN_HINTS[action] = hint
    return hint


def _run_with_hint(
    action: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """`ctx.run`'s arguments (after name and action) with the type hint the SDK would read itself."""
    from restate.serde import DefaultSerde

    # run(name, action, serde, max_attempts, max_retry_duration, type_hint, args)
    if len(args) >= 4 or kwargs.get("type_hint") is not None:
        return args, kwargs
    serde = args[0] if args else kwargs.get("serde", DefaultSerde())
    if not isinstance(serde, DefaultSerde):
        return args, kwargs
    hint = _return_hint(action)
    return (args, kwargs) if hint is _UNREAD else (args, {**kwargs, "type_hint": hint})


def _run_typed_with_hint(action: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, ...]:
    """`ctx.run_typed`'s positional arguments (options, then the action's) with the options' type hint
    set as the SDK would set it."""
    from restate.context import RunOptions
    from restate.serde import DefaultSerde

    if not args:
        hint = _return_hint(action)
        return args if hint is _UNREAD else (RunOptions(type_hint=hint),)
    options = args[0]
    if not isinstance(options, RunOptions) or not isinstance(options.serde, DefaultSerde):
        return args
    if options.type_hint is not None:
        return args
    hint = _return_hint(action)
    if hint is _UNREAD:
        return args
    options = copy.copy(options)
    options.type_hint = hint
    return (options, *args[1:])
