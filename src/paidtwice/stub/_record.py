"""Answers recorded once from a real model (`paidtwice record`, `sweep --record FILE --upstream URL`).

A `RecordingScript` sends each call it has not heard before to a real OpenAI-, Responses- or Anthropic-
compatible endpoint, as the agent sent it (whole, not streamed: the stub streams the answer itself when the
agent asked for a stream), and answers the agent with what came back. A call heard before (the same
position, system prompt and last user message: a replay asking again) gets the recorded answer without
going out. `write` turns the recorded answers into a script file that later sweeps replay offline.

The key is read from the usual environment variable (OPENAI_API_KEY for chat completions and Responses,
ANTHROPIC_API_KEY for Messages) when each request is sent, and put only in that request's header: it is not
a field of the script, not in an error (an upstream's error body may quote the key, so only its status is
said), not in the file written.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from paidtwice.stub._auto import Call, write_turns
from paidtwice.stub._scripts import Answer, Asked, Script, ToolCall, UnansweredCall, conversation_turn
from paidtwice.stub._turns import prompts

__all__ = ["KEY_VARIABLES", "Recording", "RecordingScript", "recording_script"]

KEY_VARIABLES = {"chat": "OPENAI_API_KEY", "responses": "OPENAI_API_KEY", "messages": "ANTHROPIC_API_KEY"}
"""The environment variable each API's key is read from."""
_TIMEOUT = httpx.Timeout(300.0, connect=30.0)


class Recording:
    """The answers recorded so far, by call (shared by every lane of the recording script)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: dict[Call, Answer] = {}

    def get(self, call: Call) -> Answer | None:
        with self._lock:
            return self._answers.get(call)

    def put(self, call: Call, answer: Answer) -> None:
        with self._lock:
            self._answers.setdefault(call, answer)

    def items(self) -> list[tuple[Call, Answer]]:
        with self._lock:
            return list(self._answers.items())


@dataclass(frozen=True)
class RecordingScript(Script):
    """Answers from a real model behind `upstream`, each call once; see the module's docstring."""

    upstream: str = ""
    """The endpoint's base URL: OpenAI's (ending in /v1) or Anthropic's (with or without /v1)."""
    recording: Recording = field(default_factory=Recording, compare=False, repr=False)
    """What was recorded."""

    def call_of(self, messages: Any, turn: int) -> str:
        """Each call counts its own asks: told apart by its system prompt and last user message."""
        user, system = prompts(messages)
        return hashlib.blake2b(f"{turn}\0{system}\0{user}".encode(), digest_size=8).hexdigest()

    async def prepare(self, asked: Asked) -> None:
        call = _call(asked)
        if self.recording.get(call) is not None:
            return
        self.recording.put(call, await self._ask_upstream(asked))

    def respond(self, asked: Asked, *, turn: int, ask: int, call: int, model_up: bool = True) -> Answer:
        answer = self.recording.get(_call(asked))
        if answer is None:
            return Answer(text="paidtwice: no answer was recorded for this call", status=500)
        return answer

    def answer(self, *, turn: int, ask: int, call: int, model_up: bool = True) -> Answer:
        return Answer(text="paidtwice: a recording answers from the request", status=500)

    def write(self, path: Path) -> int:
        """Write the recorded answers as a script file (TOML for .toml, else JSON); the turns written."""
        answers = [(call, answer, (), None) for call, answer in self.recording.items()]
        return write_turns(path, answers, f"Answers recorded from {self.upstream}")

    async def _ask_upstream(self, asked: Asked) -> Answer:
        variable = KEY_VARIABLES.get(asked.api)
        if variable is None:
            raise UnansweredCall(
                f"recording speaks chat completions, Responses and Messages, not {asked.api}"
            )
        key = os.environ.get(variable, "")
        if not key:
            raise UnansweredCall(f"recording needs the upstream's key in {variable}, which is not set")
        body = {k: v for k, v in asked.request.items() if k not in ("stream", "stream_options")}
        base = self.upstream.rstrip("/")
        if asked.api == "messages":
            url = f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"
            headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
        else:
            url = f"{base}/chat/completions" if asked.api == "chat" else f"{base}/responses"
            headers = {"authorization": f"Bearer {key}"}
        try:
            async with httpx.AsyncClient(timeout=_TIMEOUT) as client:
                response = await client.post(url, json=body, headers=headers)
        except httpx.HTTPError as err:
            raise UnansweredCall(f"the upstream {url} could not be reached: {type(err).__name__}") from None
        if response.status_code != 200:
            # Not the body: a provider's error may quote the key it was given.
            raise UnansweredCall(f"the upstream {url} answered HTTP {response.status_code}")
        try:
            return _answer_of(asked.api, response.json())
        except (ValueError, KeyError, IndexError, TypeError):
            raise UnansweredCall(
                f"the upstream {url} answered something that is not a {asked.api} answer"
            ) from None


def recording_script(upstream: str, *, recording: Recording | None = None) -> RecordingScript:
    """The script of a recording against `upstream`."""
    return RecordingScript(
        name="steady",
        description=f"answers recorded from {upstream}",
        upstream=upstream,
        recording=recording or Recording(),
    )


def _call(asked: Asked) -> Call:
    user, system = prompts(asked.chat)
    return (conversation_turn(asked.chat), system, user)


def _answer_of(api: str, payload: dict[str, Any]) -> Answer:
    """A provider's whole answer as the stub's `Answer`: its text, its tool calls, its token counts."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    usage = payload.get("usage") or {}
    if api == "chat":
        message = payload["choices"][0]["message"]
        texts.append(message.get("content") or "")
        for call in message.get("tool_calls") or []:
            calls.append(ToolCall(call["function"]["name"], call["function"].get("arguments") or "{}"))
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    elif api == "responses":
        for item in payload["output"]:
            if item.get("type") == "message":
                texts += [
                    c.get("text", "") for c in item.get("content") or [] if c.get("type") == "output_text"
                ]
            elif item.get("type") == "function_call":
                calls.append(ToolCall(item["name"], item.get("arguments") or "{}"))
        prompt, completion = usage.get("input_tokens"), usage.get("output_tokens")
    else:
        for block in payload["content"]:
            if block.get("type") == "text":
                texts.append(block.get("text", ""))
            elif block.get("type") == "tool_use":
                calls.append(ToolCall(block["name"], json.dumps(block.get("input") or {})))
        prompt, completion = usage.get("input_tokens"), usage.get("output_tokens")
    return Answer(
        text="".join(texts),
        tool_call=calls[0] if calls else None,
        more_tool_calls=tuple(calls[1:]),
        prompt_tokens=prompt if isinstance(prompt, int) else None,
        completion_tokens=completion if isinstance(completion, int) else None,
    )
