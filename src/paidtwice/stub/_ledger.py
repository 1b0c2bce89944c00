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
    """Conversation turn: 1 for the question, 2 after the first tool result, ..."""
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
    """Thread-safe store of calls; readers get frozen snapshots.

    Calls are indexed by lane and by (lane, invocation), so recording a call and reading one invocation's
    calls cost the same with ten calls in the ledger as with a hundred thousand.
    """

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _model: list[ModelCall] = field(default_factory=list)
    _tools: list[ToolRun] = field(default_factory=list)
    _model_slots: dict[tuple[str, str | None], list[int]] = field(default_factory=dict)
    """Slots of the model calls per (lane, invocation), and per (lane, None) for the whole lane."""
    _tool_slots: dict[tuple[str, str | None], list[int]] = field(default_factory=dict)
    """The same for the tool runs."""
    _asks: dict[tuple[str, str, int], int] = field(default_factory=dict)
    """How often each (lane, invocation, turn) was asked."""

    def open_model_call(
        self, *, lane: str, invocation_id: str, turn: int, messages: int, answer_for: AnswerFor
    ) -> int:
        """Record a new model call and return its slot; the answer is chosen under the lock."""
        with self._lock:
            call = len(self._model_slots.get((lane, invocation_id), ())) + 1
            ask = self._asks.get((lane, invocation_id, turn), 0) + 1
            self._asks[(lane, invocation_id, turn)] = ask
            answer = answer_for(turn, ask, call)
            self._model.append(
                ModelCall(lane, invocation_id, call, turn, ask, messages, answer, time.time(), None, None)
            )
            return _index(self._model_slots, lane, invocation_id, len(self._model) - 1)

    def model_call(self, slot: int) -> ModelCall:
        with self._lock:
            return self._model[slot]

    def close_model_call(self, slot: int, *, delivered: bool) -> None:
        with self._lock:
            self._model[slot] = replace(self._model[slot], finished=time.time(), delivered=delivered)

    def open_tool_run(self, *, lane: str, invocation_id: str, tool: str, arguments: str) -> int:
        with self._lock:
            call = len(self._tool_slots.get((lane, invocation_id), ())) + 1
            self._tools.append(ToolRun(lane, invocation_id, tool, call, arguments, time.time(), None, None))
            return _index(self._tool_slots, lane, invocation_id, len(self._tools) - 1)

    def tool_run(self, slot: int) -> ToolRun:
        with self._lock:
            return self._tools[slot]

    def close_tool_run(self, slot: int, *, delivered: bool) -> None:
        with self._lock:
            self._tools[slot] = replace(self._tools[slot], finished=time.time(), delivered=delivered)

    def model_calls(self, lane: str, invocation_id: str | None = None) -> list[ModelCall]:
        """Model calls on `lane`, of one invocation if given, in arrival order."""
        with self._lock:
            return [self._model[slot] for slot in self._model_slots.get((lane, invocation_id), ())]

    def tool_runs(self, lane: str, invocation_id: str | None = None) -> list[ToolRun]:
        """Tool calls on `lane`, of one invocation if given, in arrival order."""
        with self._lock:
            return [self._tools[slot] for slot in self._tool_slots.get((lane, invocation_id), ())]


def _index(slots: dict[tuple[str, str | None], list[int]], lane: str, invocation_id: str, slot: int) -> int:
    """File `slot` under its lane and under its invocation; returns it."""
    slots.setdefault((lane, None), []).append(slot)
    slots.setdefault((lane, invocation_id), []).append(slot)
    return slot
