"""The stub's ledgers: every model call and every tool call, per lane and invocation.

A lane is one agent process's view of the stub (its own base URL), so concurrent experiments on one stub keep
their counts apart; within a lane, calls are told apart by the invocation id in a header
(`INVOCATION_HEADER`), which the agent host adds to every model request a handler makes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from paidtwice.agent import AGENT_HEADER, INVOCATION_HEADER, MODEL_CALL_HEADER
from paidtwice.stub._scripts import Answer
from paidtwice.stub._usage import NO_TOKENS, TokenUsage

__all__ = ["INVOCATION_HEADER", "Booking", "Ledger", "ModelCall", "ToolRun", "asker"]

AnswerFor = Callable[[int, int, int], Answer]
"""Chooses an answer from (turn, ask, call)."""
UsageFor = Callable[[Answer], TokenUsage]
"""The tokens a chosen answer reports (its prompt included)."""


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
    """How many times this invocation has asked for this call (of this turn), this call included."""
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
    usage: TokenUsage = NO_TOKENS
    """The tokens the whole answer reports in its `usage` (prompt and completion)."""
    billed: TokenUsage | None = None
    """The tokens billed: `usage` when delivered; when cut off, the prompt and the completion tokens
    generated until the caller left (see `paidtwice.stub._usage`); None while in flight."""
    asked: str = ""
    """What tells this call apart from other calls its turn answers (`Script.call_of`): "" for a turn that
    answers one call of its conversation; a digest of what was asked for a matched turn that may answer many
    (the workers of an orchestrator). A call asked again has the same turn and the same `asked`."""
    by: str = ""
    """SERVICE/HANDLER of the handler that made it, when its invocation is one of a tree the agent host
    follows (`paidtwice.agent._tree`: the tag names the tree's root, then the caller); "" when not said."""
    replied: float | None = None
    """When the stub began sending the answer (`finished` is when it had sent it all); None until then. On a
    lane that settles first (`Lane.settle`), every frame the agent had sent before had passed the proxy."""
    settling: float | None = None
    """When the stub, its answer ready, began waiting for the lane to settle (until `replied`): time the
    agent would not have spent without the stub, left out of the clean run's shares. None: it did not."""
    offered: tuple[str, ...] = ()
    """The function tools the request offered, by name."""
    hosted: tuple[str, ...] = ()
    """The hosted tools the request offered (the provider runs them: `web_search`, ...): no stub answer
    calls them."""
    named: str = ""
    """The call as the agent host names its gates (`MODEL_CALL_HEADER`: `model:2`, or `7/model:1` for a
    callee's own first call, by its place in the tree); "" when the agent did not say."""
    agent: int | None = None
    """The pid of the agent process that asked (`AGENT_HEADER`), whenever the stub read the request; None
    when the agent did not say."""

    @property
    def name(self) -> str:
        """What a hold names the call by: the host's name, else `model:N` (N: `call`)."""
        return self.named or f"model:{self.call}"

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


@dataclass(frozen=True)
class Booking:
    """One request to the stub's booking endpoint, a step that must not happen twice."""

    lane: str
    """Lane the request arrived on."""
    invocation_id: str
    """Restate invocation the agent said it was serving."""
    request: int
    """1-based number of this request within its invocation."""
    key: str
    """The request's Idempotency-Key header ("" without one)."""
    effect: bool
    """True if this request made a booking; False if its key had made one already (it got that result)."""
    booking_id: str
    """The booking the answer names."""
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
    _bookings: list[Booking] = field(default_factory=list)
    _model_slots: dict[tuple[str, str | None], list[int]] = field(default_factory=dict)
    """Slots of the model calls per (lane, invocation), and per (lane, None) for the whole lane."""
    _tool_slots: dict[tuple[str, str | None], list[int]] = field(default_factory=dict)
    """The same for the tool runs."""
    _asks: dict[tuple[str, str, int, str], int] = field(default_factory=dict)
    """How often each (lane, invocation, turn, asked) was asked."""

    def open_model_call(
        self,
        *,
        lane: str,
        invocation_id: str,
        turn: int,
        messages: int,
        answer_for: AnswerFor,
        usage_for: UsageFor | None = None,
        asked: str = "",
        by: str = "",
        offered: tuple[str, ...] = (),
        hosted: tuple[str, ...] = (),
        named: str = "",
        agent: int | None = None,
    ) -> int:
        """Record a new model call and return its slot; the answer is chosen under the lock. `asked` tells
        apart the calls one turn answers (see `ModelCall.asked`): each counts its own asks."""
        with self._lock:
            call = len(self._model_slots.get((lane, invocation_id), ())) + 1
            # Each handler of a tree counts its own asks: the first ask of a callee is not its caller's again.
            asks_of = (lane, f"{invocation_id} {by}" if by else invocation_id, turn, asked)
            ask = self._asks.get(asks_of, 0) + 1
            self._asks[asks_of] = ask
            answer = answer_for(turn, ask, call)
            usage = usage_for(answer) if usage_for is not None else NO_TOKENS
            self._model.append(
                ModelCall(
                    lane,
                    invocation_id,
                    call,
                    turn,
                    ask,
                    messages,
                    answer,
                    time.time(),
                    None,
                    None,
                    usage,
                    asked=asked,
                    by=by,
                    offered=offered,
                    hosted=hosted,
                    named=named,
                    agent=agent,
                )
            )
            return _index(self._model_slots, lane, invocation_id, len(self._model) - 1)

    def model_call(self, slot: int) -> ModelCall:
        with self._lock:
            return self._model[slot]

    def first_of_its_name(self, slot: int) -> bool:
        """No earlier call of its lane and invocation has the call's name: a restarted agent names its
        calls anew, and what holds a call holds the first run's."""
        with self._lock:
            call = self._model[slot]
            earlier = self._model_slots.get((call.lane, call.invocation_id), ())
            return not any(self._model[s].name == call.name for s in earlier if s < slot)

    def settle_model_call(self, slot: int) -> None:
        """The call's answer is ready; the stub waits for the lane to settle before sending it."""
        with self._lock:
            self._model[slot] = replace(self._model[slot], settling=time.time())

    def reply_model_call(self, slot: int) -> None:
        """The stub begins sending the call's answer."""
        with self._lock:
            self._model[slot] = replace(self._model[slot], replied=time.time())

    def close_model_call(self, slot: int, *, delivered: bool, generated: float = 1.0) -> None:
        """Close a call; `generated` is the share of its completion written when the caller left."""
        with self._lock:
            call = self._model[slot]
            billed = call.usage if delivered else call.usage.cut_off(generated)
            self._model[slot] = replace(call, finished=time.time(), delivered=delivered, billed=billed)

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

    def open_booking(self, *, lane: str, invocation_id: str, key: str) -> int:
        """Record a booking request; it has an effect unless its key (per lane) was seen before."""
        with self._lock:
            mine = [b for b in self._bookings if b.lane == lane]
            first = next((b for b in mine if key and b.key == key and b.effect), None)
            request = 1 + sum(1 for b in mine if b.invocation_id == invocation_id)
            effects = sum(1 for b in mine if b.effect)
            booking_id = first.booking_id if first is not None else f"{lane}-booking-{effects + 1}"
            self._bookings.append(
                Booking(lane, invocation_id, request, key, first is None, booking_id, time.time(), None, None)
            )
            return len(self._bookings) - 1

    def booking(self, slot: int) -> Booking:
        with self._lock:
            return self._bookings[slot]

    def close_booking(self, slot: int, *, delivered: bool) -> None:
        with self._lock:
            self._bookings[slot] = replace(self._bookings[slot], finished=time.time(), delivered=delivered)

    def bookings(self, lane: str, invocation_id: str | None = None) -> list[Booking]:
        """Booking requests on `lane`, of one invocation if given, in arrival order."""
        with self._lock:
            return [
                b
                for b in self._bookings
                if b.lane == lane and (invocation_id is None or b.invocation_id == invocation_id)
            ]


class Asker(NamedTuple):
    """Who asked the model, from a request's headers."""

    invocation_id: str
    """The invocation header's "ID", or in a tree "ROOT SERVICE/HANDLER"'s ROOT (`paidtwice.agent._tree`)."""
    by: str
    """The tree's SERVICE/HANDLER; "" outside a tree."""
    named: str
    """The call as the host's gates name it (`ModelCall.named`)."""
    agent: int | None
    """The agent process's pid (`ModelCall.agent`)."""


def asker(headers: dict[str, str]) -> Asker:
    """Who asked, from a request's headers (lower-case names)."""
    invocation_id, _, by = headers.get(INVOCATION_HEADER, "").partition(" ")
    agent = headers.get(AGENT_HEADER, "")
    return Asker(
        invocation_id, by, headers.get(MODEL_CALL_HEADER, ""), int(agent) if agent.isdigit() else None
    )


def _index(slots: dict[tuple[str, str | None], list[int]], lane: str, invocation_id: str, slot: int) -> int:
    """File `slot` under its lane and under its invocation; returns it."""
    slots.setdefault((lane, None), []).append(slot)
    slots.setdefault((lane, invocation_id), []).append(slot)
    return slot
