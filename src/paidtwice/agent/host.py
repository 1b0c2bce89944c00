"""Serve a user's Restate app (or the deck's agent) in a process of its own, as the lab needs it.

    python -m paidtwice.agent.host MODULE:APP --port N [--attempt-log FILE] [--wait-for-go]
                                   [--step-log FILE] [--gate GATE] [--service-as OLD=NEW]
    python -m paidtwice.agent.host MODULE:APP --discover

The app is the user's code, unchanged (MODULE alone: every Restate service the module's globals hold);
`--discover` prints its discovery manifest and where each handler is defined, as JSON. One process, HTTP/2
cleartext so the server streams. The attempt log (each attempt read off the wire), the step log (the
handler's model requests, context operations and executed steps), the gates (`model:N:before`, ...: where
the handler is stopped for a sweep's kill), the invocation header on model requests and `--service-as`
are described in docs/explanation/lab.md, "The agent host".
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import dataclasses
import functools
import http.client
import importlib
import inspect
import os
import socket
import sys
import threading
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from hypercorn.asyncio import serve
from hypercorn.config import Config

from paidtwice.agent._app import (
    check,
    endpoint_of,
    explicit_handlers,
    load_app,
    print_manifest,
    promise_resolvers,
    rename,
    served,
)
from paidtwice.agent._env import (
    AGENT_HEADER,
    GATE,
    INVOCATION_HEADER,
    MODEL_CALL_HEADER,
    SERVICE_ALONE,
    SERVICE_AS,
    STEP_LOG,
)
from paidtwice.agent._go import Go, Lines, listening_socket, turn_away
from paidtwice.agent._step_log import StepLog
from paidtwice.agent._tree import TREE, Tree, tree_renames
from paidtwice.agent._wire import (
    GATES,
    RELEASE_PAUSE,
    AttemptWire,
    asked_model,
    attempt_invocation,
    attempt_position,
    hold_next_pause,
)

__all__ = ["APP_LINE", "explicit_handlers", "main"]


_STEP: ContextVar[int] = ContextVar("paidtwice_step", default=0)
"""The executed step (its number in the step log) the current code runs in; 0 outside any step. A context
variable, so each of several steps in flight at once (each its own task) sees its own."""


def _invocation() -> str:
    """The invocation the calling code serves: its attempt's, else the SDK's context's; "" outside one."""
    invocation = attempt_invocation()
    if invocation:
        return invocation
    from restate.server_context import current_context

    try:
        ctx = current_context()
    except LookupError:
        return ""
    return ctx.request().id if ctx is not None else ""


_MODEL_PATHS = ("/chat/completions", "/responses", "/completions", "/v1/messages")
"""OpenAI's chat-completions, responses and completions paths, and Anthropic's Messages path."""
_GEMINI_METHODS = (":generateContent", ":streamGenerateContent")
"""Google's Gemini calls: `.../models/{model}:generateContent` (and streamed)."""


def _is_model_request(url: Any) -> bool:
    path = getattr(url, "path", None)
    if not isinstance(path, str):
        path = urllib.parse.urlsplit(str(url)).path
    path = path.rstrip("/")
    return path.endswith(_MODEL_PATHS) or ("/models/" in path and path.endswith(_GEMINI_METHODS))


_FOREVER = threading.Event()
"""Never set: a gated handler waits on it until the process is killed."""


def _hold_forever_sync() -> None:
    _FOREVER.wait()


async def _hold_forever() -> None:
    await asyncio.Event().wait()


_IN_MODEL_REQUEST: contextvars.ContextVar[bool] = contextvars.ContextVar("paidtwice_in_model", default=False)
"""Set while a model request is logged, so a client on top of another (litellm's or openai's aiohttp
transport under httpx) logs it once."""


@dataclasses.dataclass(frozen=True)
class _Begun:
    """A model request under way."""

    invocation: str
    """The invocation it serves."""
    n: int
    """The n-th model request of that invocation (of its tree, `_tree`; 0 without a log)."""
    gate: str
    """Its gates' name, without the moment (`StepLog.next`; "" without a log): also the stub's
    `MODEL_CALL_HEADER`, so a held call is the callee's own k-th in every run."""
    tag: str
    """The stub's invocation header: the invocation (the root and the caller's SERVICE/HANDLER in a tree)."""

    def headers(self, given: Any) -> dict[str, str]:
        """The stub's headers the request does not carry yet (`given`: its headers, any mapping)."""
        ours = {INVOCATION_HEADER: self.tag, MODEL_CALL_HEADER: self.gate, AGENT_HEADER: str(os.getpid())}
        return {k: v for k, v in ours.items() if v and k not in given}


class _ModelRequests:
    """Tags, and with a step log logs and gates, model requests, whichever HTTP client makes them; the
    invocation is the attempt's own (in a tree, its root's, `_tree`)."""

    def __init__(self, log: StepLog | None, tree: Tree | None = None) -> None:
        self.log = log
        self.tree = tree

    def begin(self, url: Any) -> _Begun | None:
        """The request, when it is a model request of a handler; None for anything else."""
        if _IN_MODEL_REQUEST.get():
            return None
        invocation = _invocation()
        if not invocation or not _is_model_request(url):
            return None
        asked_model()
        tag = invocation
        place = self.tree.place_of(invocation) if self.tree is not None else None
        if place is not None:
            root, _, handler = place
            tag = f"{root} {handler}"
        n, gate = self.log.next(invocation, "model") if self.log is not None else (0, "")
        return _Begun(invocation, n, gate, tag)

    def start(self, begun: _Begun) -> bool:
        """Log the request's start; True when the gate before it holds the handler."""
        if self.log is None:
            return False
        if self.log.gated(begun.invocation, f"{begun.gate}:before"):
            return True
        self.log.write(begun.invocation, "model_start", n=begun.n, step=_STEP.get())
        return False

    def end(self, begun: _Begun, response: Any) -> bool:
        """Log the answer's arrival; True when the gate after it holds the handler."""
        if self.log is None:
            return False
        status = getattr(response, "status_code", None) or getattr(response, "status", None)
        self.log.write(begun.invocation, "model_end", n=begun.n, status=status)
        return self.log.gated(begun.invocation, f"{begun.gate}:after")

    async def send_async(self, begun: _Begun | None, send: Callable[[], Awaitable[Any]]) -> Any:
        if begun is None:
            return await send()
        if self.start(begun):
            await _hold_forever()
        token = _IN_MODEL_REQUEST.set(True)
        try:
            response = await send()
        finally:
            _IN_MODEL_REQUEST.reset(token)
        if self.end(begun, response):
            await _hold_forever()
        return response

    def send_sync(self, begun: _Begun | None, send: Callable[[], Any]) -> Any:
        if begun is None:
            return send()
        if self.start(begun):
            _hold_forever_sync()
        token = _IN_MODEL_REQUEST.set(True)
        try:
            response = send()
        finally:
            _IN_MODEL_REQUEST.reset(token)
        if self.end(begun, response):
            _hold_forever_sync()
        return response


_HTTPX_MODULES = ("httpx", "httpx2")
"""httpx, and httpx2 (the openai and anthropic clients', from 3.0 and 2.0)."""


def _instrument_http(log: StepLog | None, tree: Tree | None) -> None:
    """Model requests made through httpx, httpx2, aiohttp and http.client (urllib, requests, urllib3)."""
    requests = _ModelRequests(log, tree)
    for name in _HTTPX_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        _patch_httpx(module, requests)
    _patch_http_client(requests)
    try:
        aiohttp = importlib.import_module("aiohttp")
    except ImportError:
        return
    _patch_aiohttp(aiohttp, requests)


def _patch_httpx(module: Any, requests: _ModelRequests) -> None:
    async_send = module.AsyncClient.send
    sync_send = module.Client.send

    def tagged(request: Any) -> _Begun | None:
        begun = requests.begin(request.url)
        if begun is not None:
            request.headers.update(begun.headers(request.headers))
        return begun

    async def send_async(self: Any, request: Any, **kwargs: Any) -> Any:
        return await requests.send_async(tagged(request), lambda: async_send(self, request, **kwargs))

    def send_sync(self: Any, request: Any, **kwargs: Any) -> Any:
        return requests.send_sync(tagged(request), lambda: sync_send(self, request, **kwargs))

    module.AsyncClient.send = send_async
    module.Client.send = send_sync


def _patch_aiohttp(module: Any, requests: _ModelRequests) -> None:
    original = module.ClientSession._request
    from multidict import CIMultiDict

    async def request(self: Any, method: str, url: Any, *args: Any, **kwargs: Any) -> Any:
        begun = requests.begin(url)
        if begun is not None:
            headers = CIMultiDict(kwargs.get("headers") or {})
            headers.update(begun.headers(CIMultiDict({**(self.headers or {}), **headers})))
            kwargs["headers"] = headers
        return await requests.send_async(begun, lambda: original(self, method, url, *args, **kwargs))

    module.ClientSession._request = request


def _patch_http_client(requests: _ModelRequests) -> None:
    """urllib, and requests through urllib3: the request starts at `putrequest` (before its headers and
    body go out) and its answer arrives at `getresponse`. The stub's headers go in at `endheaders`, unless
    the caller put them."""
    connection = http.client.HTTPConnection
    putrequest, putheader = connection.putrequest, connection.putheader
    endheaders, getresponse = connection.endheaders, connection.getresponse

    def put(self: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        begun = requests.begin(url)
        self._paidtwice_model = begun
        self._paidtwice_tags = begun.headers({}) if begun is not None else {}
        if begun is not None and requests.start(begun):
            _hold_forever_sync()
        return putrequest(self, method, url, *args, **kwargs)

    def header(self: Any, name: Any, *values: Any) -> Any:
        given = name.decode("latin-1") if isinstance(name, bytes) else str(name)
        getattr(self, "_paidtwice_tags", {}).pop(given.lower(), None)
        return putheader(self, name, *values)

    def end(self: Any, *args: Any, **kwargs: Any) -> Any:
        tags = getattr(self, "_paidtwice_tags", {})
        self._paidtwice_tags = {}
        for name, value in tags.items():
            putheader(self, name, value)
        return endheaders(self, *args, **kwargs)

    def get(self: Any) -> Any:
        begun = getattr(self, "_paidtwice_model", None)
        self._paidtwice_model = None
        response = getresponse(self)
        if begun is not None and requests.end(begun, response):
            _hold_forever_sync()
        return response

    connection.putrequest = put  # type: ignore[method-assign]
    connection.putheader = header  # type: ignore[method-assign, assignment]
    connection.endheaders = end  # type: ignore[method-assign]
    connection.getresponse = get  # type: ignore[method-assign]


def _wrap_action(
    log: StepLog, invocation: str, name: str, action: Callable[..., Any], pos: int
) -> Callable[..., Any]:
    """The step's action, logging each real execution (with `pos`, its operation's position in the
    attempt); the SDK calls it only when not replaying."""

    def begin() -> tuple[int, bool]:
        n, gate = log.next(invocation, "step")
        if log.gated(invocation, f"{gate}:before"):
            return n, True
        log.write(invocation, "step_start", name=name, n=n, pos=pos)
        return n, log.gated(invocation, f"{gate}:inside")

    # Keep the action's kind: the SDK runs a sync action on an executor thread, a coroutine on the loop.
    if inspect.iscoroutinefunction(action):

        @functools.wraps(action)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            n, hold = begin()
            _STEP.set(n)  # this task's own context: the SDK runs each action in a task of its own
            if hold:
                await _hold_forever()
            result = await action(*args, **kwargs)
            log.write(invocation, "step_end", name=name, n=n)
            return result

        return run_async

    @functools.wraps(action)
    def run_sync(*args: Any, **kwargs: Any) -> Any:
        n, hold = begin()
        _STEP.set(n)  # the SDK runs a sync action in a copy of the context, on an executor thread
        if hold:
            _hold_forever_sync()
        result = action(*args, **kwargs)
        log.write(invocation, "step_end", name=name, n=n)
        return result

    return run_sync


def _raw_call(
    log: StepLog, op: Callable[..., tuple[str, int]], original: Callable[..., Any]
) -> Callable[..., Any]:
    """Every call and send of another handler (service_call, object_send, generic_call, ...), logged; in a
    tree (`_tree`), sent to this run's copy of the service with the root's header."""

    def raw_call(self: Any, service: str, handler: str, *args: Any, **kwargs: Any) -> Any:
        send = kwargs.get("send", args[5] if len(args) > 5 else False)
        followed = {} if log.tree is None else {"follows": log.tree.follows(service)}
        _, pos = op(self, "send" if send else "call", f"{service}/{handler}", **followed)
        served = service
        if log.tree is not None:
            # The call's position in the attempt is the callee's place in the tree, the same in every run.
            served, args, kwargs = log.tree.route(self, service, args, kwargs, sent=bool(send), at=pos)
        return original(self, served, handler, *args, **kwargs)

    return raw_call


def _instrument_context(log: StepLog) -> None:
    from restate.server_context import ServerInvocationContext as Ctx

    original_run, original_run_typed, original_sleep = Ctx.run, Ctx.run_typed, Ctx.sleep

    def op(self: Any, kind: str, name: str, **fields: Any) -> tuple[str, int]:
        """Log a context operation; its invocation, and its position in the attempt (which tells a step
        run again at the same place of the code from one run for the first time)."""
        invocation: str = self.request().id
        if log.tree is not None:
            log.tree.place(self)  # its tree: from its request's headers
        n, gate = log.next(invocation, "op")
        pos = attempt_position()
        log.write(invocation, "op", kind=kind, name=name, n=n, pos=pos, **fields)
        if log.gated(invocation, f"{gate}:before"):
            if log.tree is not None and log.tree.is_callee(invocation):
                # A callee waits at its next flush instead: the loop goes on, so its caller (and the rest of
                # the tree) run to where they wait on it or end, as they would with the callee slow there.
                held.add(invocation)
            else:
                # Blocks the loop on purpose: nothing of this operation may reach the journal.
                _hold_forever_sync()
        if kind == "sleep" and log.gated(invocation, f"{gate}:pause"):
            hold_next_pause(invocation)
        return invocation, pos

    held: set[str] = set()
    """Callees stopped at a gate: nothing they made since reaches the server (`flush`)."""

    def flush(original: Callable[..., Any]) -> Callable[..., Any]:
        """The SDK's only ways out to the server (the flush at each await, the last at the end), which a
        held callee never passes."""

        async def send(self: Any) -> Any:
            if self.request().id in held:
                await _hold_forever()
            return await original(self)

        return send

    def step(original: Callable[..., Any]) -> Callable[..., Any]:
        """ctx.run / ctx.run_typed, with the action wrapped so each real execution is logged."""

        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            # run_typed takes its name and action by position only: an action's own `name=` argument is
            # the action's, so only what is not given by position is looked for among the keywords.
            rest = list(args)
            name: str = rest.pop(0) if rest else kwargs.pop("name")
            action: Callable[..., Any] = rest.pop(0) if rest else kwargs.pop("action")
            invocation, pos = op(self, "run", name)
            return original(self, name, _wrap_action(log, invocation, name, action, pos), *rest, **kwargs)

        return run

    def sleep(self: Any, *args: Any, **kwargs: Any) -> Any:
        op(self, "sleep", str(kwargs.get("name") or ""))
        return original_sleep(self, *args, **kwargs)

    for attribute, method in (
        ("run", step(original_run)),
        ("take_and_send_output", flush(Ctx.take_and_send_output)),
        ("leave", flush(Ctx.leave)),
        ("run_typed", step(original_run_typed)),
        ("sleep", sleep),
        ("do_raw_call", _raw_call(log, op, Ctx.do_raw_call)),
        *(
            (name, _state_op(op, name, getattr(Ctx, name)))
            for name in ("get", "set", "clear", "clear_all", "state_keys")
        ),
    ):
        setattr(Ctx, attribute, method)
    _instrument_signals(op)


def _state_op(
    op: Callable[..., tuple[str, int]], kind: str, original: Callable[..., Any]
) -> Callable[..., Any]:
    """ctx.get / set / clear / clear_all / state_keys: each one command in the journal (a get of a
    Virtual Object's state, which the server sends with the invocation, is answered at once), so the
    timeline counts the journal's entries right for an agent that keeps its conversation in state."""

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        op(self, kind, str(args[0]) if args and isinstance(args[0], str) else "")
        return original(self, *args, **kwargs)

    return call


def _instrument_signals(op: Callable[..., tuple[str, int]]) -> None:
    """Awakeables and a Workflow's durable promises, each made, read, resolved or rejected, logged as a
    context operation (`op`) so the lab can answer the waits and tell them from those the handler answers."""
    from restate.server_context import ServerDurablePromise
    from restate.server_context import ServerInvocationContext as Ctx

    def completes(kind: str, original: Callable[..., Any]) -> Callable[..., Any]:
        """ctx.resolve_awakeable / reject_awakeable: one command, sent with the next; the handler resolving
        its own awakeable never waits for it (the sweep must not resolve it either)."""

        def complete(self: Any, name: str, *args: Any, **kwargs: Any) -> Any:
            op(self, kind, name)
            return original(self, name, *args, **kwargs)

        return complete

    original_awakeable = Ctx.awakeable

    def awakeable(self: Any, *args: Any, **kwargs: Any) -> Any:
        """ctx.awakeable(): no journal entry of its own (a signal of the invocation); its id is logged, so
        the lab can resolve it, with the JSON schema of its type when the code names one."""
        made = original_awakeable(self, *args, **kwargs)
        op(self, "awakeable", made[0], schema=_schema_of(args, kwargs))
        return made

    original_value = ServerDurablePromise.value

    def promise_value(self: Any) -> Any:
        """A Workflow's `ctx.promise(NAME).value()`: a GetPromise command; the lab resolves it through the
        shared handler that resolves it (see `promise_resolvers`)."""
        op(self.server_context, "promise", self.name, schema=_schema_of((self.serde,), {}))
        return original_value(self)

    def promise_completes(original: Callable[..., Any]) -> Callable[..., Any]:
        """A Workflow's `ctx.promise(NAME).resolve(...)` or `.reject(...)`: a CompletePromise command and
        its completion, which the handler awaits; a promise it completes itself is never waited for."""

        def complete(self: Any, *args: Any, **kwargs: Any) -> Any:
            op(self.server_context, "complete_promise", self.name)
            return original(self, *args, **kwargs)

        return complete

    ServerDurablePromise.value = promise_value  # type: ignore[method-assign]
    ServerDurablePromise.resolve = promise_completes(ServerDurablePromise.resolve)  # type: ignore[method-assign]
    ServerDurablePromise.reject = promise_completes(ServerDurablePromise.reject)  # type: ignore[method-assign]
    Ctx.awakeable = awakeable  # type: ignore[method-assign]
    Ctx.resolve_awakeable = completes("complete_awakeable", Ctx.resolve_awakeable)  # type: ignore[method-assign]
    Ctx.reject_awakeable = completes("complete_awakeable", Ctx.reject_awakeable)  # type: ignore[method-assign]


def _schema_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The JSON schema of what an awakeable or a promise resolves to, from its `type_hint` (or its serde's);
    None when the code names no type."""
    hint = kwargs.get("type_hint", args[1] if len(args) > 1 else None)
    serde = kwargs.get("serde", args[0] if args else None)
    hint = hint or getattr(serde, "type_hint", None)
    if hint is None:
        return None
    try:
        import pydantic

        schema: Any = pydantic.TypeAdapter(hint).json_schema()
    except Exception:  # not a type pydantic models: the SDK's own mapping of plain types
        from restate.discovery import type_hint_to_json_schema

        schema = type_hint_to_json_schema(hint)
    return schema if isinstance(schema, dict) else None


APP_LINE = "*"
"""The `invocation` of step-log lines about the whole app, not one invocation."""


async def _serve(app: Any, sock: socket.socket, lines: Lines | None, log: StepLog | None) -> None:
    if lines is not None and not lines.ended:
        # Serving, the process still reads the lab's lines: its gates from now on (`GATES`), its fault has
        # landed (`RELEASE_PAUSE`). On the handlers' loop: a handler sees the new gates before the release.
        loop = asyncio.get_running_loop()

        def read() -> None:
            for words in lines.read():
                if words == [RELEASE_PAUSE]:
                    app.release_pause()
                elif words and words[0].startswith(GATES) and log is not None:
                    log.gates = frozenset(g for g in words[0].removeprefix(GATES).split(",") if g)
            if lines.ended:
                loop.remove_reader(lines.fd)

        loop.add_reader(lines.fd, read)
    config = Config()
    config.bind = [f"fd://{sock.fileno()}"]
    config.accesslog = None
    config.loglevel = "WARNING"
    config.graceful_timeout = 0.5
    await serve(app, config)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="paidtwice.agent.host")
    parser.add_argument("target", help="MODULE:APP (that app) or MODULE (every service it defines)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--attempt-log", help="file that gets one JSON line per attempt")
    parser.add_argument(
        "--wait-for-go",
        action="store_true",
        help="load the app, then open the port only when a line arrives on stdin",
    )
    parser.add_argument("--ready-file", help="created once the app is loaded (with --wait-for-go)")
    parser.add_argument(
        "--listen-fd",
        type=int,
        help="serve on this inherited listening socket (the lab's, bound to --port) instead of binding one",
    )
    parser.add_argument(
        "--step-log",
        default=os.environ.get(STEP_LOG) or None,
        help="file that gets one JSON line per model request, context operation and step execution",
    )
    parser.add_argument(
        "--gate",
        default=os.environ.get(GATE) or None,
        help="stop the handler for good at this moment (needs --step-log), e.g. model:1:after",
    )
    parser.add_argument(
        "--service-as",
        action="append",
        default=[item for item in os.environ.get(SERVICE_AS, "").split(",") if item],
        help="OLD=NEW: serve service OLD under the name NEW (repeatable)",
    )
    parser.add_argument(
        "--alone",
        action="store_true",
        default=os.environ.get(SERVICE_ALONE) == "1",
        help="serve the renamed services alone, leaving the app's others out of the endpoint",
    )
    parser.add_argument(
        "--check",
        metavar="SERVICE/HANDLER",
        help="only load the app and check it serves this handler; exit 2 with one line if not",
    )
    parser.add_argument(
        "--discover",
        action="store_true",
        help="only load the app and print its discovery manifest (JSON); exit 2 with one line if it fails",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    sys.path.insert(0, os.getcwd())
    if args.discover:
        return print_manifest(args.target)
    if args.check:
        problem = check(args.target, *args.check.split("/", 1))
        if problem:
            print(f"paidtwice: {problem}", file=sys.stderr)
            return 2
        return 0
    app = load_app(args.target)
    renames, tree = args.service_as, None
    if os.environ.get(TREE):
        endpoint = endpoint_of(app)
        renames = tree_renames(list(endpoint.services) if endpoint else [], renames, os.environ[TREE])
        tree = Tree.of(renames)
    if renames:
        rename(app, renames, alone=args.alone)
    log = None
    if args.step_log:
        log_fd = os.open(args.step_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        log = StepLog(log_fd, args.gate, tree)
        _instrument_context(log)
        # Once per process, for no invocation: which handlers replay nothing on a retry (a sweep must not
        # call their journaled answers kept).
        log.write(APP_LINE, "explicit_recovery", handlers=explicit_handlers(served(app)))
        log.write(APP_LINE, "promise_resolvers", services=promise_resolvers(served(app)))
    # Always: every model request is tagged with its invocation, logged or not.
    _instrument_http(log, tree)
    fd = None
    if args.attempt_log:
        fd = os.open(args.attempt_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    app = AttemptWire(app, fd)
    if args.ready_file:
        with open(args.ready_file, "w") as ready:
            ready.write(f"loaded {os.getpid()}\n")
    listener = socket.socket(fileno=args.listen_fd) if args.listen_fd is not None else None
    lines: Lines | None = None
    if args.wait_for_go:
        # A restart's start-up cost (imports) is paid while the agent is still down; the process serves from
        # the moment the lab says, so the down time is the experiment's, not Python's, and only once the
        # connections it stands for were turned away (`paidtwice.agent._go`). This idle process keeps the
        # moment better than a busy lab would.
        lines, go = Lines(sys.stdin.fileno()), Go()
        for words in lines.wait():
            go.read(words)
        sock = listener or listening_socket(args.port)
        serving_at = turn_away(sock, lines, go)
        # It may add `hold-pause`: the moment the lab will kill in is the pause, held open (`AttemptWire`).
        app.hold_pause = go.hold_pause
    else:
        sock = listener or listening_socket(args.port)
        serving_at = time.time()
    if args.ready_file:
        # The moment the agent is up for the server, for the lab's down time: no polling of the port.
        with open(args.ready_file, "a") as ready:
            ready.write(f"listening {serving_at!r}\n")
    asyncio.run(_serve(app, sock, lines, log))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
