"""What a soak drives, decided once: the deck's agent (or an app that reads the deck agent's environment),
or a user's own app (an `AppTarget`: its service, handler and input).

Both have one interface (`Soaked`): the service as its code names it, the agent process to start, how each
invocation is sent, whether its tool runs count, and how a model call's place among its invocation's answers
is found. The soak asks them; it never asks which kind it drives.

A user's app is renamed for the soak by paidtwice's host, each invocation sent to its handler with its input
(a Virtual Object or Workflow with a key of its own, so the invocations do not queue behind one key), its
model answered by a script through the Anthropic or OpenAI client it already has. The host tags each model
request with its invocation, so the stub counts the app's calls per invocation with no change to its code.
Tool runs are the deck's idea (the stub's tool endpoints): for a user's app only model calls are counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from paidtwice._exceptions import UsageError
from paidtwice.agent._env import ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, SERVICE_AS, STUB_API_KEY
from paidtwice.agent._process import AgentHost
from paidtwice.lab._runner import DECK_AGENT, QUESTION, Lab
from paidtwice.stub import Lane
from paidtwice.sweep._runs import DEFAULT_KEY
from paidtwice.targets import AppTarget

__all__ = ["Calling", "DeckAgent", "OwnApp", "Soaked", "soak_target", "soaked"]


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


class Soaked(Protocol):
    """What a soak drives."""

    @property
    def service(self) -> str:
        """The service's name in its code; the soak serves it renamed."""
        ...

    @property
    def label(self) -> str:
        """What the record's `app` says: "MODULE:APP SERVICE/HANDLER", or "" for the deck's agent."""
        ...

    @property
    def counts_tools(self) -> bool:
        """Its tool runs are counted (the stub's tool endpoints are the deck agent's)."""
        ...

    def agent(self, lab: Lab, lane: Lane, served_as: str) -> AgentHost:
        """Its journaled agent, answered by `lane`, serving the service as `served_as` (not started)."""
        ...

    def calling(self, served_as: str, *, keyed: bool) -> Calling:
        """How its invocations are sent, once the server has said whether the service is `keyed`."""
        ...

    def by_order(self, turns: list[int]) -> bool:
        """A model call's place among its invocation's answers is its order since its agent's life began,
        not its script turn: the clean invocation's calls had `turns`."""
        ...


@dataclass(frozen=True)
class DeckAgent:
    """The deck's agent, or MODULE:APP (from `app_dir`) of an app that reads the deck agent's environment."""

    target: str = DECK_AGENT
    """MODULE:APP served."""
    app_dir: Path | None = None
    """Where it imports from."""

    service = "Agent"
    label = ""
    counts_tools = True

    def agent(self, lab: Lab, lane: Lane, served_as: str) -> AgentHost:
        return lab.new_agent(
            mode="journaled", lane=lane, service=served_as, target=self.target, cwd=self.app_dir
        )

    def calling(self, served_as: str, *, keyed: bool) -> Calling:
        return Calling(service=served_as, handler="run", input=QUESTION, key=None)

    def by_order(self, turns: list[int]) -> bool:
        return False  # its script's turns are its conversation's, 1, 2, 3... in order


@dataclass(frozen=True)
class OwnApp:
    """A user's app, renamed for the soak by paidtwice's host, its model reached through its own client."""

    target: AppTarget
    """Its app, service, handler, input and key (`soak_target`)."""
    app_dir: Path | None = None
    """Where it imports from when the target does not say."""

    counts_tools = False  # tool runs are the deck's: a user's app has its model calls counted only

    @property
    def service(self) -> str:
        return self.target.service

    @property
    def label(self) -> str:
        return f"{self.target.app} {self.target.service}/{self.target.handler}"

    def agent(self, lab: Lab, lane: Lane, served_as: str) -> AgentHost:
        env = {
            **dict(self.target.env),
            SERVICE_AS: f"{self.target.service}={served_as}",
            ANTHROPIC_BASE_URL: lane.anthropic_base_url,
            ANTHROPIC_API_KEY: STUB_API_KEY,
        }
        cwd = Path(self.target.cwd) if self.target.cwd else self.app_dir
        return lab.new_agent(
            mode="journaled", lane=lane, service=served_as, target=self.target.app, cwd=cwd, extra_env=env
        )

    def calling(self, served_as: str, *, keyed: bool) -> Calling:
        if self.target.key is not None and not keyed:
            plain = f"{self.target.service} is a plain service (no key)"
            raise UsageError(f"--key goes with a Virtual Object or a Workflow; {plain}")
        key = (self.target.key or DEFAULT_KEY) if keyed else None
        return Calling(service=served_as, handler=self.target.handler, input=self.target.input, key=key)

    def by_order(self, turns: list[int]) -> bool:
        # A user's script may answer several calls with one turn, or match them out of order.
        return turns != list(range(1, len(turns) + 1))


def soaked(target: str | AppTarget, app_dir: Path | None) -> Soaked:
    """What the soak drives: a user's app given as an `AppTarget`, else the deck agent's MODULE:APP."""
    return OwnApp(target, app_dir) if isinstance(target, AppTarget) else DeckAgent(target, app_dir)


def soak_target(
    app: str, service: str, handler: str, input: Any, *, key: str | None = None, app_dir: Path | None = None
) -> AppTarget:
    """A user's app to soak, once it is seen to import and to serve `service`/`handler`
    (`AppTarget.checked`); `UsageError` in one line if it does not."""
    return AppTarget.checked(app, service, handler, input, key=key, app_dir=app_dir)
