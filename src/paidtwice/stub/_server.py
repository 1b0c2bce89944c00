"""The stub model: a real HTTP server speaking OpenAI's chat-completions format and Anthropic's Messages
format, plus tool endpoints.

It runs in a thread of the lab's own process (hypercorn on an asyncio loop), so the runner reads its ledgers
directly. Each agent gets a lane, a URL prefix of its own (`/lanes/NAME/v1` is the agent's OPENAI_BASE_URL,
`/lanes/NAME` its ANTHROPIC_BASE_URL), with the script that lane answers by. A held answer waits while
watching the connection: if the caller goes away first (the agent was killed), the ledger records the answer
as never delivered.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import threading
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from hypercorn.asyncio import serve
from hypercorn.config import Config

from paidtwice._exceptions import ServerStartError
from paidtwice.engine import HOST, PortLease, lease_port
from paidtwice.stub._auto import offered_tools
from paidtwice.stub._gemini import GEMINI, is_gemini_path
from paidtwice.stub._gemini import as_chat as gemini_chat
from paidtwice.stub._gemini import error_payload as gemini_error
from paidtwice.stub._gemini import render as gemini_render
from paidtwice.stub._gemini import stream_body as gemini_stream
from paidtwice.stub._ledger import Booking, Ledger, ModelCall, ToolRun, asker
from paidtwice.stub._scripts import SCRIPTS, Answer, Asked, Script, UnansweredCall
from paidtwice.stub._stream import stream_events, wants_stream
from paidtwice.stub._usage import NO_TOKENS, TokenUsage, estimate_completion, estimate_prompt

__all__ = ["UNANSWERED_STATUS", "Lane", "StubModel", "answer_marks"]

UNANSWERED_STATUS = 400
"""The status of the answer to a call no turn of the script answers: a 4xx, so the openai client raises at
once instead of retrying (it retries 408, 409, 429 and 5xx)."""

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

WEATHER = {"city": "Paris", "temperature_c": 18, "conditions": "sunny"}
IDEMPOTENCY_HEADER = "idempotency-key"


@dataclass
class Lane:
    """One agent's view of the stub: its URLs, its script, its share of the ledgers."""

    name: str
    """URL-safe lane name."""
    script: Script
    """How this lane's model answers."""
    stub: StubModel
    model_up: bool = True
    """False while the lab keeps the model endpoint down (script `fail`)."""
    latency: float = 0.0
    """Seconds the model takes to answer each call (a held call waits its hold instead)."""
    booking_seconds: float = 0.0
    """Seconds a booking takes to confirm; the request is in flight meanwhile (a kill can land in it)."""
    model_call_held: int = 0
    """Model call of each invocation (1 = the first) held until its caller leaves (killed). 0: none."""
    model_call_billed_after: float = 0.0
    """Seconds into the held call its kill stands for: billed as cut off there, however late it came."""
    booking_held: int = 0
    """Booking request of each invocation held until its caller leaves, never confirmed. 0: none."""
    single: bool = False
    """Every call on the lane serves its one invocation, whether or not the agent says so in a header (a
    deployment started by a command does not): asking for one invocation's calls gives them all."""
    settle: Callable[[], Awaitable[None]] | None = None
    """Awaited before each model answer is sent: a command's protocol proxy reads every frame the agent
    sent before its call, so the wire shows whether a step had begun when the answer came back."""

    @property
    def base_url(self) -> str:
        """OpenAI-compatible base URL (what OPENAI_BASE_URL should be)."""
        return f"{self.stub.url}/lanes/{self.name}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Anthropic base URL (what ANTHROPIC_BASE_URL should be; the client adds `/v1/messages`)."""
        return f"{self.stub.url}/lanes/{self.name}"

    @property
    def gemini_base_url(self) -> str:
        """Gemini base URL (what GOOGLE_GEMINI_BASE_URL should be; the client adds `/v1beta/models/...`)."""
        return f"{self.stub.url}/lanes/{self.name}"

    @property
    def tools_url(self) -> str:
        return f"{self.stub.url}/lanes/{self.name}/tools"

    def model_calls(self, invocation_id: str | None = None) -> list[ModelCall]:
        return self.stub.ledger.model_calls(self.name, None if self.single else invocation_id)

    def tool_runs(self, invocation_id: str | None = None) -> list[ToolRun]:
        return self.stub.ledger.tool_runs(self.name, None if self.single else invocation_id)

    def bookings(self, invocation_id: str | None = None) -> list[Booking]:
        return self.stub.ledger.bookings(self.name, invocation_id)


class StubModel:
    """The stub server. Use as a context manager; `open_lane()` gives each agent its own lane."""

    def __init__(self) -> None:
        self.ledger = Ledger()
        """Every call made to this stub."""
        self._lanes: dict[str, Lane] = {}
        self._lane_ids = itertools.count(1)
        self._lease: PortLease | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._shutdown: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._lanes_lock = threading.Lock()
        self.open_lane(SCRIPTS["steady"], name="default")

    @property
    def port(self) -> int:
        if self._lease is None:
            raise RuntimeError("the stub is not running")
        return self._lease.port

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def open_lane(self, script: Script, *, name: str | None = None) -> Lane:
        with self._lanes_lock:
            lane_name = name or f"{script.name}-{next(self._lane_ids)}"
            lane = Lane(lane_name, script, self)
            self._lanes[lane_name] = lane
            return lane

    def lane(self, name: str) -> Lane | None:
        with self._lanes_lock:
            return self._lanes.get(name)

    @property
    def asgi_app(self) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
        """The stub as an ASGI app, for a caller in this process that skips the network (replay-check)."""
        return self._app

    def start(self) -> StubModel:
        self._lease = lease_port()
        self._thread = threading.Thread(target=self._serve, name="paidtwice-stub", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout=30.0) or self._error is not None:
            self.stop()
            raise ServerStartError(f"the stub model did not start: {self._error}")
        return self

    def _serve(self) -> None:
        config = Config()
        config.bind = [f"{HOST}:{self.port}"]
        config.accesslog = None
        config.errorlog = None
        config.loglevel = "ERROR"
        config.keep_alive_timeout = 75
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        self._shutdown = asyncio.Event()
        assert self._lease is not None
        # hypercorn binds the port itself; release our probe lock only once it is bound.
        lease = self._lease

        async def main() -> None:
            server = asyncio.ensure_future(
                serve(self._app, config, shutdown_trigger=self._shutdown_wait)  # type: ignore[arg-type]
            )
            for _ in range(500):
                if server.done():
                    break
                if await _listening(lease.port):
                    self._ready.set()
                    break
                await asyncio.sleep(0.01)
            await server

        try:
            loop.run_until_complete(main())
        except BaseException as err:  # noqa: BLE001 - reported to the starting thread
            self._error = err
        finally:
            self._ready.set()
            loop.close()

    async def _shutdown_wait(self) -> None:
        assert self._shutdown is not None
        await self._shutdown.wait()

    def stop(self) -> None:
        if self._loop is not None and self._shutdown is not None and not self._loop.is_closed():
            try:
                self._loop.call_soon_threadsafe(self._shutdown.set)
            except RuntimeError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=10.0)
        if self._lease is not None:
            self._lease.release()

    def __enter__(self) -> StubModel:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        parts = path.strip("/").split("/")
        lane_name = "default"
        if len(parts) >= 2 and parts[0] == "lanes":
            lane_name, parts = parts[1], parts[2:]
        lane = self.lane(lane_name)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        invocation_id = asker(headers)[0]
        if parts == ["health"]:
            await _respond(send, 200, {"status": "ok"})
            return
        if lane is None:
            await _respond(send, 404, {"error": {"message": f"no lane {lane_name!r}"}})
            return
        if scope["method"] == "POST" and parts == ["v1", "chat", "completions"]:
            body = await _read_body(receive)
            if body is None:
                # The caller died while sending (a kill): no model would have read, or billed, half a request.
                return
            await self._chat(lane, headers, body, receive, send)
            return
        if scope["method"] == "POST" and parts == ["tools", "book"]:
            await _read_body(receive)
            key = headers.get(IDEMPOTENCY_HEADER, "")
            await self._book(lane, invocation_id, key, receive, send)
            return
        if scope["method"] == "POST" and parts == ["v1", "messages"]:
            body = await _read_body(receive)
            if body is None:
                return
            await self._chat(lane, headers, body, receive, send, api="messages")
            return
        if scope["method"] == "POST" and parts == ["v1", "responses"]:
            body = await _read_body(receive)
            if body is None:
                return
            await self._chat(lane, headers, body, receive, send, api="responses")
            return
        streamed = is_gemini_path(parts) if scope["method"] == "POST" else None
        if streamed is not None:
            body = await _read_body(receive)
            if body is None:
                return
            await self._chat(lane, headers, body, receive, send, api=GEMINI, stream=streamed)
            return
        if scope["method"] == "GET" and parts == ["tools", "weather"]:
            query = scope.get("query_string", b"").decode()
            await self._weather(lane, invocation_id, query, receive, send)
            return
        await _respond(send, 404, {"error": {"message": f"no route {scope['method']} {path}"}})

    async def _chat(
        self,
        lane: Lane,
        headers: dict[str, str],
        body: bytes,
        receive: Receive,
        send: Send,
        *,
        api: str = "chat",
        stream: bool = False,
    ) -> None:
        """Answer a request of OpenAI's chat completions (`chat`), OpenAI's Responses (`responses`),
        Anthropic's Messages (`messages`) or Google's Gemini (`gemini`, streamed by its path: `stream`)."""
        invocation_id, by, named, agent = asker(headers)
        try:
            request = json.loads(body or b"{}")
            messages = _messages_of(api, request)
        except (ValueError, AttributeError):
            await _respond(send, 400, {"error": {"message": f"body is not a {api} request"}})
            return
        chat = gemini_chat(request) if api == GEMINI else _as_chat(api, request, messages)
        try:
            turn = lane.script.turn_of(chat)
            unanswered = ""
        except UnansweredCall as err:
            # Never a silent default: the call is in the ledger (turn 0) with the reason as its error answer.
            turn, unanswered = 0, str(err)

        asked = Asked(api, request, chat)
        offered, hosted = offered_tools(asked)
        try:
            await lane.script.prepare(asked)
        except UnansweredCall as err:
            turn, unanswered = 0, str(err)

        def answer_for(t: int, ask: int, call: int) -> Answer:
            if unanswered:
                return Answer(text=unanswered, status=UNANSWERED_STATUS)
            return lane.script.respond(asked, turn=t, ask=ask, call=call, model_up=lane.model_up)

        prompt = estimate_prompt(messages, request.get("tools") if isinstance(request, dict) else None)
        slot = self.ledger.open_model_call(
            lane=lane.name,
            invocation_id=invocation_id,
            turn=turn,
            messages=len(messages),
            answer_for=answer_for,
            usage_for=lambda answer: _usage(answer, prompt),
            asked=lane.script.call_of(chat, turn) if turn else "",
            by=by,
            offered=offered,
            hosted=hosted,
            named=named,
            agent=agent,
        )
        record = self.ledger.model_call(slot)
        hold = lane.script.hold_of(record.name) if self.ledger.first_of_its_name(slot) else None
        # A scripted timeout holds its call at least that long: a client that waits less gives up on it.
        wait = max(hold.seconds if hold is not None else lane.latency, record.answer.delay)
        held = record.call == lane.model_call_held
        began = time.monotonic()
        # A held call is never answered: it ends when its caller leaves (killed); a slow one may end so too.
        if (held or wait > 0) and await _caller_left_within(receive, None if held else wait):
            left = lane.model_call_billed_after if held else hold.billed_after if hold is not None else None
            generated = (time.monotonic() - began if left is None else left) / wait if wait > 0 else 1.0
            self.ledger.close_model_call(slot, delivered=False, generated=generated)
            return
        if lane.settle is not None:
            self.ledger.settle_model_call(slot)
            await lane.settle()
        self.ledger.reply_model_call(slot)
        payload = _payload(api, request, messages, record.answer, turn, record.usage)
        await _send_answer(send, api, request, payload, record.answer, stream=stream)
        self.ledger.close_model_call(slot, delivered=True)

    async def _book(self, lane: Lane, invocation_id: str, key: str, receive: Receive, send: Send) -> None:
        """A booking, as payment APIs take one: made when the request arrives, confirmed after
        `booking_seconds`. A request with a key seen before makes nothing: it gets the first request's
        booking, once that one is confirmed (it waits while the first is still in flight)."""
        slot = self.ledger.open_booking(lane=lane.name, invocation_id=invocation_id, key=key)
        booking = self.ledger.booking(slot)
        first = booking
        if not booking.effect:
            first = next(b for b in self.ledger.bookings(lane.name) if b.key == key and b.effect)
        confirmed_at = first.started + lane.booking_seconds
        held = booking.request == lane.booking_held
        if await _caller_left_within(receive, None if held else confirmed_at - time.time()):
            self.ledger.close_booking(slot, delivered=False)
            return
        await _respond(send, 200, {"booking_id": booking.booking_id, "created": booking.effect})
        self.ledger.close_booking(slot, delivered=True)

    async def _weather(
        self, lane: Lane, invocation_id: str, query: str, receive: Receive, send: Send
    ) -> None:
        slot = self.ledger.open_tool_run(
            lane=lane.name, invocation_id=invocation_id, tool="weather", arguments=query
        )
        hold = lane.script.tool_hold
        if hold is not None and hold.call == self.ledger.tool_run(slot).call:
            if await _caller_left_within(receive, hold.seconds):
                self.ledger.close_tool_run(slot, delivered=False)
                return
        city = urllib.parse.parse_qs(query).get("city", [WEATHER["city"]])[0]
        await _respond(send, 200, {**WEATHER, "city": city})
        self.ledger.close_tool_run(slot, delivered=True)


def _usage(answer: Answer, prompt: int) -> TokenUsage:
    """The tokens an answer reports: the script's figures where it sets them, else the stub's estimate."""
    if answer.status != 200:
        return NO_TOKENS  # an error answer is not billed
    completion = estimate_completion(answer.text)
    for tool in answer.tool_calls:
        completion += estimate_completion("", tool.name, tool.arguments) - estimate_completion("")
    return TokenUsage(
        answer.prompt_tokens if answer.prompt_tokens is not None else prompt,
        answer.completion_tokens if answer.completion_tokens is not None else completion,
    )


def _completion(
    request: dict[str, Any], messages: list[Any], answer: Answer, turn: int, usage: TokenUsage
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.text}
    finish = "stop"
    if answer.tool_call is not None:
        message["tool_calls"] = [
            {
                "id": f"call_{_call_id(turn, i, tool.arguments)}",
                "type": "function",
                "function": {"name": tool.name, "arguments": tool.arguments},
            }
            for i, tool in enumerate(answer.tool_calls)
        ]
        finish = "tool_calls"
    return {
        "id": f"chatcmpl-{hashlib.sha1(f'{time.time_ns()}'.encode()).hexdigest()[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(request.get("model", "paidtwice-stub")),
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        },
    }


def answer_marks(call: ModelCall) -> tuple[str, ...]:
    """What a journal entry that holds this call's answer carries of it, whichever API was asked: its words
    (when long enough to tell) and its tool calls' ids."""
    answer = call.answer
    marks = [answer.text.strip()] if len(answer.text.strip()) >= 8 else []
    for i, tool in enumerate(answer.tool_calls):
        marks += [_call_id(call.turn, i, tool.arguments), _call_id(call.turn, i, answer.summary())]
    return tuple(marks)


def _call_id(turn: int, index: int, what: str) -> str:
    """A tool call's id: the same for the same answer (a replay's call matches the journaled one); the
    first call of an answer keeps the id it had before answers could hold several."""
    salt = f":{index}" if index else ""
    return hashlib.sha1(f"{turn}:{what}{salt}".encode()).hexdigest()[:12]


def _as_chat(api: str, request: dict[str, Any], messages: list[Any]) -> list[Any]:
    """A request of any API as chat-completions messages, so that a script finds the call's turn (its
    position, last user message and system prompt) the same way whatever client asked."""
    if api == "messages":
        system = request.get("system")
        chat: list[Any] = [{"role": "system", "content": system}] if system else []
        for m in messages:
            content = m.get("content") if isinstance(m, dict) else None
            results = isinstance(content, list) and all(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in content
            )
            # A tool's result comes back as a user message of tool_result blocks: not what the user asked.
            chat.append({"role": "tool", "content": ""} if results and content else m)
        return chat
    if api == "responses":
        instructions = request.get("instructions")
        chat = [{"role": "system", "content": instructions}] if instructions else []
        inside = False
        for item in messages:
            output = isinstance(item, dict) and (
                item.get("role") == "assistant" or item.get("type") in _RESPONSE_OUTPUTS
            )
            if output and not inside:
                chat.append({"role": "assistant", "content": ""})
            elif isinstance(item, dict) and item.get("type") == "function_call_output":
                chat.append({"role": "tool", "content": ""})
            elif isinstance(item, dict) and not output and "role" in item:
                chat.append(item)
            inside = bool(output)
        return chat
    return messages


_RESPONSE_OUTPUTS = {"function_call", "reasoning", "web_search_call", "file_search_call", "computer_call"}


def _response(request: dict[str, Any], items: list[Any], answer: Answer, turn: int) -> dict[str, Any]:
    """The answer as an OpenAI Responses object: a message, then a `function_call` item for a tool."""
    digest = hashlib.sha1(f"{turn}:{answer.summary()}".encode()).hexdigest()[:12]
    output: list[dict[str, Any]] = []
    if answer.text:
        output.append(
            {
                "type": "message",
                "id": f"msg_{digest}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": answer.text, "annotations": []}],
            }
        )
    for i, tool in enumerate(answer.tool_calls):
        ident = _call_id(turn, i, answer.summary())
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{ident}",
                "call_id": f"call_{ident}",
                "name": tool.name,
                "arguments": tool.arguments,
                "status": "completed",
            }
        )
    words = sum(len(json.dumps(i).split()) for i in items)
    produced = len(answer.text.split()) + 8 * len(answer.tool_calls)
    return {
        "id": f"resp_{hashlib.sha1(f'{time.time_ns()}'.encode()).hexdigest()[:16]}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": str(request.get("model", "paidtwice-stub")),
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": request.get("tools", []),
        "error": None,
        "incomplete_details": None,
        "instructions": request.get("instructions"),
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "usage": {
            "input_tokens": words,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": produced,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": words + produced,
        },
    }


def _message(request: dict[str, Any], messages: list[Any], answer: Answer, turn: int) -> dict[str, Any]:
    """The answer as an Anthropic Messages response: text, then a `tool_use` block when it calls a tool."""
    content: list[dict[str, Any]] = []
    if answer.text:
        content.append({"type": "text", "text": answer.text})
    stop = "end_turn"
    for i, tool in enumerate(answer.tool_calls):
        try:
            arguments = json.loads(tool.arguments or "{}")
        except ValueError:
            arguments = {}
        ident = _call_id(turn, i, tool.arguments)
        content.append({"type": "tool_use", "id": f"toolu_{ident}", "name": tool.name, "input": arguments})
        stop = "tool_use"
    # Anthropic's content is a string or a list of blocks; count the words of either.
    words = sum(len(json.dumps(m.get("content") or "").split()) + 4 for m in messages if isinstance(m, dict))
    return {
        "id": f"msg_{hashlib.sha1(f'{time.time_ns()}'.encode()).hexdigest()[:16]}",
        "type": "message",
        "role": "assistant",
        "model": str(request.get("model", "paidtwice-stub")),
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": words,
            "output_tokens": len(answer.text.split()) + 8 * len(answer.tool_calls),
        },
    }


def _messages_of(api: str, request: Any) -> list[Any]:
    """The conversation a request carries, in its API's own shape."""
    if api == GEMINI:
        return list(request.get("contents", []))
    if api == "responses":
        given = request.get("input", [])
        return [{"role": "user", "content": given}] if isinstance(given, str) else list(given)
    return list(request.get("messages", []))


def _payload(
    api: str, request: Any, messages: list[Any], answer: Answer, turn: int, usage: TokenUsage
) -> dict[str, Any]:
    """The answer's body, as the request's API writes an answer or an error."""
    if answer.status != 200:
        if api == GEMINI:
            return gemini_error(answer)
        if api == "messages":
            error = {"type": _error_type(answer.status, "api_error"), "message": answer.text}
            return {"type": "error", "error": error}
        if answer.status == UNANSWERED_STATUS:
            kind = "paidtwice_unanswered"
        else:
            kind = _error_type(answer.status, "server_error")
        return {"error": {"message": answer.text, "type": kind}}
    if api == GEMINI:
        return gemini_render(answer, usage, str(request.get("model", "gemini-stub")))
    if api == "messages":
        return _message(request, messages, answer, turn)
    if api == "responses":
        return _response(request, messages, answer, turn)
    return _completion(request, messages, answer, turn, usage)


async def _read_body(receive: Receive) -> bytes | None:
    """The request's body; None if the caller went away before sending all of it."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _send_answer(
    send: Send, api: str, request: Any, payload: dict[str, Any], answer: Answer, *, stream: bool
) -> None:
    """The answer as its API sends it: events when the request streams, else one body (with Retry-After)."""
    if answer.status == 200 and api == GEMINI and stream:
        await _respond_events(send, gemini_stream(payload))
    elif answer.status == 200 and api != GEMINI and wants_stream(request):
        await _respond_events(send, stream_events(api, request, payload))
    else:
        after = answer.retry_after
        retry = () if after is None else ((b"retry-after", f"{after:g}".encode()),)
        await _respond(send, answer.status, payload, headers=retry)


async def _caller_left_within(receive: Receive, seconds: float | None) -> bool:
    """Wait up to `seconds` (None: until it does); True as soon as the client disconnects."""
    if seconds is not None and seconds <= 0:
        return False

    async def disconnected() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    try:
        await asyncio.wait_for(disconnected(), timeout=seconds)
    except TimeoutError:
        return False
    return True


def _error_type(status: int, server: str) -> str:
    """The error's type as the vendors name it: a 429 is a rate limit, a 5xx the server's, a 4xx the
    request's."""
    if status == 429:
        return "rate_limit_error"
    return server if status >= 500 else "invalid_request_error"


async def _respond(
    send: Send, status: int, payload: dict[str, Any], *, headers: Sequence[tuple[bytes, bytes]] = ()
) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _respond_events(send: Send, body: bytes) -> None:
    """A streamed answer: its whole event stream in one body (the clients read it event by event)."""
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _listening(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection(HOST, port)
    except OSError:
        return False
    writer.close()
    return True
