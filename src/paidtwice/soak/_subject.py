"""What a soak drives: any target (`paidtwice.targets.Target`) whose model calls the stub can tell apart by
invocation, its agent started through the target (`Target.launch`).

`Soaked` is what the soak asks of it: the service as its code names it, the agent process to start, how
each invocation is sent, whether its tool runs count, and how a model call's place among its invocation's
answers is found. The soak never asks which kind of target it drives.

A target is renamed for the soak by its kind (paidtwice's host serves a user's app's service under the
soak's name, as it does in a sweep), each invocation sent to its handler with its input (a Virtual Object
or Workflow with a key of its own, so the invocations do not queue behind one key), its model answered by a
script through the Anthropic, OpenAI or Gemini client it already has. The host tags each model request with
its invocation, so the stub counts an app's calls per invocation with no change to its code; a kind whose
calls reach the stub untagged (a command's) is refused (`Target.not_soakable`). Tool runs are the deck's
idea (the stub's tool endpoints): for a user's app only model calls are counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paidtwice._exceptions import UsageError
from paidtwice.lab import Lab
from paidtwice.stub import Lane
from paidtwice.sweep import DEFAULT_KEY
from paidtwice.targets import Agent, AppTarget, DeckTarget, Target

__all__ = ["DECK", "Calling", "Soaked", "soak_target", "soaked"]

DECK = DeckTarget("journaled", pause=None)
"""The deck's journaled agent, its durable pause the lab's (else its own): what a soak drives by default."""


@dataclass(frozen=True)
class Calling:
    """How each of the soak's invocations is sent."""

    service: str
    """The service as registered for this soak."""
    handler: str
    """The handler called."""
    input: Any
    """The JSON input of every invocation."""
    key: str | None
    """For a keyed service, the stem of each invocation's own key ("STEM-N"); None for a plain service."""

    def send(self, lab: Lab, n: int | str) -> str:
        """Send the invocation numbered `n`; its id."""
        key = f"{self.key}-{n}" if self.key is not None else None
        return lab.ingress.send(self.service, self.handler, self.input, key=key)


@dataclass(frozen=True)
class Soaked:
    """A target as the soak drives it."""

    target: Target

    @property
    def service(self) -> str:
        """The service's name in its code; the soak serves it renamed."""
        return self.target.service

    @property
    def label(self) -> str:
        """What the record's `app` says (`Target.label`)."""
        return self.target.label

    @property
    def counts_tools(self) -> bool:
        """Its tool runs are counted (the stub's tool endpoints are the deck agent's)."""
        return self.target.deck_stub

    def agent(self, lab: Lab, lane: Lane, served_as: str) -> Agent:
        """Its agent, answered by `lane`, serving the service as `served_as` (not started)."""
        agent, _trace = lab.launch(self.target, lane, served_as)
        return agent

    def calling(self, served_as: str, *, keyed: bool) -> Calling:
        """How its invocations are sent, once the server has said whether the service is `keyed`."""
        target = self.target
        if target.key is not None and not keyed:
            plain = f"{target.service} is a plain service (no key)"
            raise UsageError(f"--key goes with a Virtual Object or a Workflow; {plain}")
        key = (target.key or DEFAULT_KEY) if keyed else None
        return Calling(service=served_as, handler=target.handler, input=target.input, key=key)

    def by_order(self, turns: list[int]) -> bool:
        """A model call's place among its invocation's answers is its order since its agent's life began,
        not its script turn: the clean invocation's calls had `turns`."""
        if self.target.deck_stub:
            return False  # its script's turns are its conversation's, 1, 2, 3... in order
        # A user's script may answer several calls with one turn, or match them out of order.
        return turns != list(range(1, len(turns) + 1))


def soaked(target: Target) -> Soaked:
    """The target as the soak drives it; `UsageError` in one line for a kind the soak cannot count."""
    if target.not_soakable is not None:
        raise UsageError(target.not_soakable)
    return Soaked(target)


def soak_target(
    app: str, service: str, handler: str, input: Any, *, key: str | None = None, app_dir: Path | None = None
) -> AppTarget:
    """A user's app to soak, once it is seen to import and to serve `service`/`handler`
    (`AppTarget.checked`); `UsageError` in one line if it does not."""
    return AppTarget.checked(app, service, handler, input, key=key, app_dir=app_dir)
