"""The stub's ledgers: every model call and every tool call, per lane and invocation.

A lane is one agent process's view of the stub (its own base URL), so concurrent experiments on one stub keep
their counts apart; within a lane, calls are told apart by the invocation id the agent sends in a header.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from paidtwice.stub._scripts import Answer

__all__ = ["INVOCATION_HEADER", "Ledger", "ModelCall", "ToolRun"]

INVOCATION_HEADER = "x-paidtwice-invocation"

AnswerFor = Callable[[int, int, int], Answer]
"""Chooses an answer from (turn, ask, call)."""


@dataclass(frozen=True)
class ModelCall:
    """One request to the stub's chat-completions endpoint."""

    lane: str
    """Lane the call arrived on."""
    invocation_id: str
    """Restate invocation the agent said it was serving ("" if it did not say)."""
    call: int
    """1-based number of this call within its invocation (or lane, without an invocation id)."""
    turn: int
    """The script's turn that answered: for the built-in scripts the conversation's turn (1 for the question,
    2 after the first tool result, ...); for a script file the number of its `[[turn]]`; 0 when no turn of the
    script answers the call (the answer is then the error saying why)."""
    ask: int
    """How many times this invocation has asked for this turn, this call included."""
    messages: int
    """Number of messages in the request."""
    answer: Answer
    """What the stub answered, or would have answered."""
    started: float
    """Wall-clock time the request arrived."""
    finished: float | None
    """When the answer was sent, or the caller was found gone; None while in flight."""
    delivered: bool | None
    """True if the answer was sent; False if the caller was gone first; None while in flight."""

    @property
    def unanswered(self) -> bool:
        """No turn of the script answers this call: its answer is an error saying why."""
        return self.turn == 0


@dataclass(frozen=True)
class ToolRun:
    """One request to a tool endpoint."""

    lane: str
    """Lane the call arrived on."""
    invocation_id: str
    """Restate invocation the agent said it was serving."""
    tool: str
    """Tool name, e.g. "weather"."""
    call: int
    """1-based number of this tool call within its invocation."""
    arguments: str
    """The request's query string."""
    started: float
    """Wall-clock time the request arrived."""
    finished: float | None
    """When the answer was sent or the caller was found gone; None while in flight."""
    delivered: bool | None
    """True if the answer was sent; False if the caller was gone first; None while in flight."""


@dataclass
class Ledger:
    """Thread-safe store of calls; readers get frozen snapshots."""

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _model: list[ModelCall] = field(default_factory=list)
    _tools: list[ToolRun] = field(default_factory=list)

    def open_model_call(
        self, *, lane: str, invocation_id: str, turn: int, messages: int, answer_for: AnswerFor
    ) -> int:
        """Record a new model call and return its slot; the answer is chosen under the lock."""
        with self._lock:
            same = [c for c in self._model if c.lane == lane and c.invocation_id == invocation_id]
            call = len(same) + 1
            ask = sum(1 for c in same if c.turn == turn) + 1
            answer = answer_for(turn, ask, call)
            self._model.append(
                ModelCall(lane, invocation_id, call, turn, ask, messages, answer, time.time(), None, None)
            )
            return len(self._model) - 1

    def model_call(self, slot: int) -> ModelCall:
        with self._lock:
            return self._model[slot]

    def close_model_call(self, slot: int, *, delivered: bool) -> None:
        with self._lock:
            self._model[slot] = replace(self._model[slot], finished=time.time(), delivered=delivered)

    def open_tool_run(self, *, lane: str, invocation_id: str, tool: str, arguments: str) -> int:
        with self._lock:
            call = 1 + sum(1 for t in self._tools if t.lane == lane and t.invocation_id == invocation_id)
            self._tools.append(ToolRun(lane, invocation_id, tool, call, arguments, time.time(), None, None))
            return len(self._tools) - 1

    def tool_run(self, slot: int) -> ToolRun:
        with self._lock:
            return self._tools[slot]

    def close_tool_run(self, slot: int, *, delivered: bool) -> None:
        with self._lock:
            self._tools[slot] = replace(self._tools[slot], finished=time.time(), delivered=delivered)

    def model_calls(self, lane: str, invocation_id: str | None = None) -> list[ModelCall]:
        """Model calls on `lane`, of one invocation if given, in arrival order."""
        with self._lock:
            return [
                c
                for c in self._model
                if c.lane == lane and (invocation_id is None or c.invocation_id == invocation_id)
            ]

    def tool_runs(self, lane: str, invocation_id: str | None = None) -> list[ToolRun]:
        """Tool calls on `lane`, of one invocation if given, in arrival order."""
        with self._lock:
            return [
                t
                for t in self._tools
                if t.lane == lane and (invocation_id is None or t.invocation_id == invocation_id)
            ]
