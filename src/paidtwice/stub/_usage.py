"""Tokens: what the stub's answers say they used, and what a call cut off in flight is billed.

The estimate, when a script does not set a turn's usage, is deterministic and follows OpenAI's own rule of
thumb, about four characters of English text to a token:

    tokens(text)      = ceil(len(text) / 4)
    prompt_tokens     = 3 + sum over messages of (4 + tokens(content) + tokens(tool_calls as JSON))
                          + tokens(the request's tool definitions as JSON)
    completion_tokens = tokens(answer text) + tokens(tool name + its JSON arguments)

The 3 and the 4 are the per-request and per-message framing tokens OpenAI documents for its chat format.

A call cut off in flight (the caller went away before the answer was sent) is billed as the providers bill a
dropped streaming request: the whole prompt, plus the completion tokens generated until the caller went
away. The stub's assumption: the model generates its completion at a steady rate over the time it takes to
answer (the lane's model latency, or the script's hold), so a caller gone after a fraction f of that time is
billed floor(f * completion_tokens); a call the lab holds open until its kill is billed at the moment the
hold stands for (`Hold.billed_after`), however late the kill came. An error answer (5xx) is not billed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

__all__ = ["TokenUsage", "estimate_completion", "estimate_prompt"]


@dataclass(frozen=True)
class TokenUsage:
    """Tokens of one model call, as OpenAI's `usage` reports them."""

    prompt_tokens: int
    """Tokens read: the request's messages and tool definitions."""
    completion_tokens: int
    """Tokens written: the answer's text and tool call."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens
        )

    def cut_off(self, generated: float) -> TokenUsage:
        """What is billed when the caller left after `generated` (0..1) of the completion was written."""
        share = min(1.0, max(0.0, generated))
        return TokenUsage(self.prompt_tokens, math.floor(self.completion_tokens * share))


NO_TOKENS = TokenUsage(0, 0)


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def estimate_prompt(messages: list[Any], tools: Any = None) -> int:
    """Prompt tokens of a chat-completions request, by the rule in this module's docstring."""
    total = 3
    for message in messages:
        if not isinstance(message, dict):
            continue
        total += 4 + _tokens(str(message.get("content") or ""))
        if message.get("tool_calls"):
            total += _tokens(json.dumps(message["tool_calls"], sort_keys=True))
    if tools:
        total += _tokens(json.dumps(tools, sort_keys=True))
    return total


def estimate_completion(text: str, tool_name: str | None = None, arguments: str | None = None) -> int:
    """Completion tokens of an answer, by the rule in this module's docstring."""
    return _tokens(text) + (_tokens(tool_name + (arguments or "")) if tool_name else 0)
