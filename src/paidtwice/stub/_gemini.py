"""Google's Gemini API as the stub speaks it: `POST /v1beta/models/{model}:generateContent`, and
`:streamGenerateContent?alt=sse` streamed, as the google-genai client (and Google's ADK on it) calls them
with `GOOGLE_GEMINI_BASE_URL` pointed at a lane.

A request's `contents` are read as chat messages (a `model` turn is the assistant's; a turn of
`functionResponse` parts is a tool's result, not a question; `systemInstruction` is the system prompt), so a
script finds a call's turn as for the other APIs. An answer is one candidate whose parts are the text and a
`functionCall` per tool; an error is Google's `{"error": {"code", "message", "status"}}`.
"""

from __future__ import annotations

import json
from typing import Any

from paidtwice.stub._scripts import Answer
from paidtwice.stub._usage import TokenUsage

__all__ = ["GEMINI", "as_chat", "error_payload", "is_gemini_path", "render", "stream_body"]

GEMINI = "gemini"
"""The API's name in the stub (beside "chat", "responses" and "messages")."""
_METHODS = {"generateContent": False, "streamGenerateContent": True}
_STATUSES = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}


def is_gemini_path(parts: list[str]) -> bool | None:
    """For a path's parts after the lane: None if it is not a Gemini call, else whether it is streamed."""
    if len(parts) != 3 or parts[0] not in ("v1beta", "v1", "v1alpha") or parts[1] != "models":
        return None
    _, _, method = parts[2].rpartition(":")
    return _METHODS.get(method)


def _text(parts: Any) -> str:
    if not isinstance(parts, list):
        return ""
    return "\n".join(str(p.get("text", "")) for p in parts if isinstance(p, dict) and "text" in p)


def as_chat(request: dict[str, Any]) -> list[Any]:
    """The request's contents as chat-completions messages."""
    chat: list[Any] = []
    system = request.get("systemInstruction") or request.get("system_instruction")
    if isinstance(system, dict) and _text(system.get("parts")):
        chat.append({"role": "system", "content": _text(system.get("parts"))})
    for content in request.get("contents") or []:
        if not isinstance(content, dict):
            continue
        parts = content.get("parts") or []
        role = content.get("role", "user")
        if role == "model":
            chat.append({"role": "assistant", "content": _text(parts)})
        elif role in ("function", "tool") or any(
            isinstance(p, dict) and ("functionResponse" in p or "function_response" in p) for p in parts
        ):
            chat.append({"role": "tool", "content": ""})
        else:
            chat.append({"role": "user", "content": _text(parts)})
    return chat


def render(answer: Answer, usage: TokenUsage, model: str) -> dict[str, Any]:
    """The answer as a GenerateContentResponse."""
    parts: list[dict[str, Any]] = []
    if answer.text:
        parts.append({"text": answer.text})
    for tool in answer.tool_calls:
        try:
            arguments = json.loads(tool.arguments or "{}")
        except ValueError:
            arguments = {}
        parts.append({"functionCall": {"name": tool.name, "args": arguments}})
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0},
        ],
        "usageMetadata": {
            "promptTokenCount": usage.prompt_tokens,
            "candidatesTokenCount": usage.completion_tokens,
            "totalTokenCount": usage.total_tokens,
        },
        "modelVersion": model,
    }


def error_payload(answer: Answer) -> dict[str, Any]:
    """An error answer in Google's shape."""
    status = _STATUSES.get(answer.status, "INTERNAL" if answer.status >= 500 else "FAILED_PRECONDITION")
    return {"error": {"code": answer.status, "message": answer.text, "status": status}}


def stream_body(payload: dict[str, Any]) -> bytes:
    """A streamed answer (`alt=sse`): the whole response as one `data:` event, as a short answer comes."""
    return f"data: {json.dumps(payload)}\r\n\r\n".encode()
