"""How the stub answers a replay's model calls: the user's script, each ask one later than recorded."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from paidtwice.stub import Answer, Asked, Script

__all__ = ["replay_script"]


@dataclass(frozen=True)
class _Reasked(Script):
    """A script answering each ask as the next one: the recorded run asked every turn once already."""

    base: Script | None = None
    """The script it shifts."""

    def turn_of(self, messages: Sequence[Any]) -> int:
        """The base's turn: a script file matches turns by what is asked (`when`), not by position alone."""
        assert self.base is not None
        return self.base.turn_of(messages)

    def call_of(self, messages: Sequence[Any], turn: int) -> str:
        assert self.base is not None
        return self.base.call_of(messages, turn)

    def answer(self, *, turn: int, ask: int, call: int, model_up: bool = True) -> Answer:
        assert self.base is not None
        return self.base.answer(turn=turn, ask=ask + 1, call=call + 1, model_up=model_up)

    def respond(self, asked: Asked, *, turn: int, ask: int, call: int, model_up: bool = True) -> Answer:
        assert self.base is not None
        return self.base.respond(asked, turn=turn, ask=ask + 1, call=call + 1, model_up=model_up)

    async def prepare(self, asked: Asked) -> None:
        assert self.base is not None
        await self.base.prepare(asked)


def replay_script(script: Script) -> Script:
    """The script as a replay hears it: every ask one later than the recorded run's."""
    return _Reasked(name=f"{script.name} (replayed)", description=script.description, base=script)
