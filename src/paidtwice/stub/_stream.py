"""The stub's answers streamed, for a request with `"stream": true`: the same answer, as server-sent events in
the form each API streams it (chat-completion chunks, Anthropic's message events, Responses events).

An agent that streams its model's answer (for a user interface, or a framework's `astream`/`run_stream`) reads
these events, not a JSON body: given one, the official clients yield nothing and the agent runs on an empty
answer. The events are built from the non-streamed payload, so both forms always say the same thing.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["stream_events", "wants_stream"]

Event = tuple[str | None, Any]
"""One server-sent event: its `event:` name (None: none) and its data (JSON, or the literal `[DONE]`)."""


def wants_stream(request: Any) -> bool:
    """The request asks for its answer streamed."""
    return isinstance(request, dict) and request.get("stream") is True


def stream_events(api: str, request: dict[str, Any], payload: dict[str, Any]) -> bytes:
    """The answer `payload` (as the API returns it whole) as the body of that API's event stream."""
    if api == "messages":
        events = _message_events(payload)
    elif api == "responses":
        events = _response_events(payload)
    else:
        options = request.get("stream_options")
        usage = isinstance(options, dict) and options.get("include_usage") is True
        events = _chat_events(payload, usage)
    lines = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        body = data if isinstance(data, str) else json.dumps(data)
        lines.append(f"{head}data: {body}\n\n")
    return "".join(lines).encode()


def _chat_events(payload: dict[str, Any], usage: bool) -> list[Event]:
    """Chat-completion chunks: the role and text, each tool call whole, the finish reason, the usage when
    asked (`stream_options.include_usage`), then `[DONE]`."""
    choice = payload["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {
            "id": payload["id"],
            "object": "chat.completion.chunk",
            "created": payload["created"],
            "model": payload["model"],
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }

    opening = {"role": "assistant", "content": message.get("content") or ""}
    events: list[Event] = [(None, chunk(opening, None))]
    for index, call in enumerate(message.get("tool_calls") or []):
        events.append((None, chunk({"tool_calls": [{"index": index, **call}]}, None)))
    events.append((None, chunk({}, choice["finish_reason"])))
    if usage:
        events.append((None, {**chunk({}, None), "choices": [], "usage": payload["usage"]}))
    events.append((None, "[DONE]"))
    return events


def _message_events(payload: dict[str, Any]) -> list[Event]:
    """Anthropic's message stream: message_start, each content block (start, one delta, stop), then
    message_delta with the stop reason and message_stop."""
    start = {**payload, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**payload["usage"], "output_tokens": 0}
    events: list[Event] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(payload["content"]):
        if block["type"] == "tool_use":
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            opened = {**block, "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opened}),
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    ending = {"stop_reason": payload["stop_reason"], "stop_sequence": None}
    produced = {"output_tokens": payload["usage"]["output_tokens"]}
    events += [
        ("message_delta", {"type": "message_delta", "delta": ending, "usage": produced}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def _response_events(payload: dict[str, Any]) -> list[Event]:
    """OpenAI's Responses stream: created, each output item (added, its text or arguments, done), then
    completed with the whole response."""
    events: list[Event] = []

    def add(kind: str, **fields: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": len(events), **fields}))

    add("response.created", response={**payload, "status": "in_progress", "output": []})
    for index, item in enumerate(payload["output"]):
        at = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            add("response.output_item.added", output_index=index, item={**item, "content": []})
            for part_index, part in enumerate(item["content"]):
                where = {**at, "content_index": part_index}
                add("response.content_part.added", **where, part={**part, "text": ""})
                add("response.output_text.delta", **where, delta=part["text"], logprobs=[])
                add("response.output_text.done", **where, text=part["text"], logprobs=[])
                add("response.content_part.done", **where, part=part)
        else:
            add("response.output_item.added", output_index=index, item={**item, "arguments": ""})
            add("response.function_call_arguments.delta", **at, delta=item["arguments"])
            add("response.function_call_arguments.done", **at, arguments=item["arguments"], name=item["name"])
        add("response.output_item.done", output_index=index, item=item)
    add("response.completed", response=payload)
    return events
