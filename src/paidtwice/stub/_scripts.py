"""What the stub model answers: scripts keyed by the turn that answers a call.

A script first says which of its turns answers a request (`turn_of`): for the built-in scripts, the
conversation's turn (turn 1: the question; turn 2: after the tool's result); a script file can also match a
turn by what is asked. It then sees how many times this invocation has asked for that turn already, so a
replay that asks the same turn again can get the same answer, different words, or a different decision, as
the deck's runs need.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from paidtwice._exceptions import NotFound

__all__ = [
    "SCRIPTS",
    "Answer",
    "Asked",
    "Hold",
    "Script",
    "ToolCall",
    "UnansweredCall",
    "conversation_turn",
    "script_by_name",
]


class UnansweredCall(Exception):
    """No turn of a script answers a call (or two do); the message says which call and why."""


def conversation_turn(messages: Sequence[Any]) -> int:
    """The conversation's turn a request asks for: 1 + the assistant messages it already holds."""
    return 1 + sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


@dataclass(frozen=True)
class ToolCall:
    """A tool the model asks the agent to call."""

    name: str
    """Function name, e.g. "get_weather"."""
    arguments: str
    """JSON-encoded arguments, as OpenAI sends them."""


@dataclass(frozen=True)
class Answer:
    """One model answer: a tool call (with optional words) or a final text."""

    text: str
    """The assistant message's content (words said alongside a tool call, or the final answer)."""
    tool_call: ToolCall | None = None
    """The tool the model asks for; None for a final answer."""
    status: int = 200
    """HTTP status; anything but 200 is an error answer (the model endpoint failing)."""
    prompt_tokens: int | None = None
    """The `usage` this answer reports for the prompt, as a script sets it; None: the stub's estimate."""
    completion_tokens: int | None = None
    """The `usage` this answer reports for the completion, as a script sets it; None: the stub's estimate."""
    more_tool_calls: tuple[ToolCall, ...] = ()
    """Further tools asked for in the same answer, beside `tool_call` (parallel tool calls)."""
    retry_after: float | None = None
    """For an error answer: the seconds its `Retry-After` header asks the client to wait; None: no header."""
    delay: float = 0.0
    """Seconds the stub holds the answer back first (a model that times out: a client that waits less
    gives up, and the call is never delivered)."""

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Every tool this answer asks for, in order (none for a final answer)."""
        return (self.tool_call, *self.more_tool_calls) if self.tool_call is not None else ()

    @property
    def decision(self) -> str:
        """What the model decided, without its words: "tool:get_weather" or "answer"."""
        if self.status != 200:
            return f"error:{self.status}"
        return "+".join(f"tool:{t.name}" for t in self.tool_calls) or "answer"

    def summary(self) -> str:
        if self.status != 200:
            return f"HTTP {self.status}"
        if self.tool_call is not None:
            return ", ".join(f"{t.name}({t.arguments})" for t in self.tool_calls)
        return self.text


@dataclass(frozen=True)
class Asked:
    """A model request as the stub received it, for a script that answers from the request itself."""

    api: str
    """"chat" (chat completions), "responses" or "messages" (Anthropic)."""
    request: dict[str, Any]
    """The request's body, parsed."""
    chat: list[Any]
    """Its messages as chat-completions messages (see the server's `_as_chat`)."""


@dataclass(frozen=True)
class Hold:
    """Hold back the answer to one call for a while (the call stays in flight)."""

    call: int
    """Which call of the invocation to hold (1 = the first); with `place`, of that callee's own calls."""
    seconds: float
    """How long to hold it before answering, if the caller is still there."""
    billed_after: float | None = None
    """Seconds into the call a caller gone during the hold is billed for (its prompt and that share of its
    answer), whenever it went: a lab's hold keeps a moment open until its kill lands, and the moment, not
    how late the kill came, is what was generated. None: when it went (a client that gave up)."""
    place: str = ""
    """In a tree of invocations the host follows, the callee whose call it is, by its place in the tree
    (`paidtwice.agent._tree`); "" for the root's (or a lone invocation's) calls."""

    @property
    def name(self) -> str:
        """The held call as the agent host names it (`ModelCall.name`): `model:2`, `7/model:1`."""
        return f"{self.place}/model:{self.call}" if self.place else f"model:{self.call}"

    @staticmethod
    def of(name: str, seconds: float, *, billed_after: float | None = None) -> Hold:
        """The hold of the call named `name` (`Hold.name`)."""
        place, _, call = name.rpartition("/")
        return Hold(int(call.removeprefix("model:")), seconds, billed_after=billed_after, place=place)


CITY = "Paris"
_WEATHER = ToolCall("get_weather", json.dumps({"city": CITY}))
_DECIDE_TOOL = "I'll look up the current weather in Paris first."
_FINAL = "It is 18 degrees and sunny in Paris: a light jacket is enough."
_FINAL_DRIFT = (
    "Paris is sunny at 18 degrees; a light jacket will do.",
    "Sunny and 18 degrees in Paris right now, so a light jacket is fine.",
    "With 18 degrees and sun in Paris, take a light jacket.",
    "It's a sunny 18 degrees in Paris: light jacket weather.",
)
_DECIDE_DRIFT = (
    "Let me check the weather in Paris.",
    "I need the current Paris weather before answering.",
    "First, the weather in Paris.",
    "Checking what the weather is like in Paris.",
)
_DIRECT = "Paris is usually mild this time of year; a light jacket should do."


@dataclass(frozen=True)
class Script:
    """A named way of answering. `answer` is a pure function of (turn, ask, call)."""

    name: str
    """Script name as used on the command line and in experiment rows."""
    description: str
    """One line saying what it does."""
    hold: Hold | None = None
    """Hold back one call's answer (scripts `hold`)."""
    tool_hold: Hold | None = None
    """Hold back one tool call's answer."""
    more_holds: tuple[Hold, ...] = ()
    """Further model calls held back alongside `hold` (a sweep's point with parallel calls in flight)."""
    state: tuple[tuple[str, str], ...] = ()
    """The state a Virtual Object (or Workflow) is given before each run, as (name, JSON value): a script
    file's `[state]` table, so that a later message of a conversation is swept, not only its first."""
    awakeables: tuple[str, ...] = ()
    """The values (JSON) a sweep resolves a handler's awakeables and promises with, the n-th wait the n-th
    (the last repeats): a script file's `[[awakeable]]` tables (`value = ...`)."""

    def hold_of(self, name: str) -> Hold | None:
        """How the model call named `name` (`ModelCall.name`) is held back, if it is."""
        return next((h for h in (self.hold, *self.more_holds) if h is not None and h.name == name), None)

    def turn_of(self, messages: Sequence[Any]) -> int:
        """Which turn answers a request with these messages: here, the conversation's turn.

        Raises `UnansweredCall` when no turn answers it (a script file's turns all match other calls).
        """
        return conversation_turn(messages)

    def call_of(self, messages: Sequence[Any], turn: int) -> str:
        """What tells apart the calls `turn` answers, so that each call's asks are counted on their own;
        "" when the turn is one call of its conversation (a turn answered by its position)."""
        return ""

    def respond(self, asked: Asked, *, turn: int, ask: int, call: int, model_up: bool = True) -> Answer:
        """The answer to the request `asked`: by default the script's `answer` for its turn; a script that
        answers from the request (`--script auto`) reads it."""
        return self.answer(turn=turn, ask=ask, call=call, model_up=model_up)

    async def prepare(self, asked: Asked) -> None:
        """Called with each request before it is answered; a script that asks a real model for its answer
        (`paidtwice record`) does so here, off the ledger's lock."""

    def answer(self, *, turn: int, ask: int, call: int, model_up: bool = True) -> Answer:
        """The answer for `turn` (1-based), asked for the `ask`-th time; `call` counts all calls.

        `model_up` is False while the lab keeps the model endpoint down (script `fail`).
        """
        kind = self.name
        if turn >= 2:
            if kind == "fail" and not model_up:
                return Answer(text="model endpoint unavailable", status=500)
            if kind == "drifting":
                return Answer(text=_FINAL_DRIFT[(call - 1) % len(_FINAL_DRIFT)])
            return Answer(text=_FINAL)
        if kind == "flip" and ask == 2:
            return Answer(text=_DIRECT)
        if kind == "changed" and ask >= 2:
            return Answer(text=_DIRECT)
        if kind == "drifting":
            return Answer(text=_DECIDE_DRIFT[(call - 1) % len(_DECIDE_DRIFT)], tool_call=_WEATHER)
        return Answer(text=_DECIDE_TOOL, tool_call=_WEATHER)


SCRIPTS: dict[str, Script] = {
    script.name: script
    for script in (
        Script("steady", "same decision, same words, on every call"),
        Script("drifting", "same decision, different words on every call"),
        Script("hold", "like steady, but the answer to one call is held back", hold=Hold(1, 3.0)),
        Script("flip", "a replayed first turn answers directly once, then asks for the tool again"),
        Script("changed", "from the replay on, the first turn answers directly, for good"),
        Script("fail", "the second turn answers HTTP 500 until the model is back"),
    )
}


def script_by_name(name: str, *, hold: Hold | None = None, tool_hold: Hold | None = None) -> Script:
    """Look a script up by name, optionally with its hold replaced."""
    try:
        base = SCRIPTS[name]
    except KeyError:
        known = ", ".join(SCRIPTS)
        raise NotFound(f"unknown stub script {name!r} (known: {known})") from None
    return Script(
        base.name,
        base.description,
        hold=hold if hold is not None else base.hold,
        tool_hold=tool_hold if tool_hold is not None else base.tool_hold,
    )
