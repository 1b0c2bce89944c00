"""The targets of a command as a user names them (`TargetSpec`), built into `Target`s once checked."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paidtwice._exceptions import UsageError
from paidtwice.stub import state_entries
from paidtwice.targets._app import DECK_MODES, AppTarget, DeckTarget
from paidtwice.targets._command import CommandTarget
from paidtwice.targets._target import Resolution, Target

__all__ = ["TargetSpec"]


@dataclass(frozen=True)
class TargetSpec:
    """What to sweep, as named: the deck's agent in `modes` (no app, no command), a user's app's handlers,
    or the handler of a deployment a command starts; and how each is called."""

    app: str | None = None
    """MODULE:APP (that app object as given) or MODULE (every service it defines), importable from
    `app_dir`."""
    command: str | None = None
    """A shell command serving a Restate deployment in any language, run in `app_dir`, told its port in
    `port_env`."""
    service: str | None = None
    """The service swept (every handler of it, or `handler`)."""
    handler: str | None = None
    """The handler swept."""
    handlers: tuple[str, ...] = ()
    """The handlers to sweep (SERVICE/HANDLER, or SERVICE for all its handlers); with neither these nor
    `service`, every handler the discovery manifest of the app (or the command's deployment) lists."""
    input: Any = None
    """The JSON input of every invocation; None: one made from the handler's input schema, if it needs
    one."""
    modes: tuple[str, ...] = DECK_MODES
    """The deck agent's modes (without an app or a command)."""
    app_dir: str | Path | None = None
    """Where the app imports from, or where the command runs."""
    port_env: str = "PORT"
    """The variable that tells a command its port."""
    key: str | None = None
    """The key a Virtual Object or Workflow is called with; None: "paidtwice" when keyed."""
    state: Mapping[str, Any] | None = None
    """The state (names, JSON values) set under the key before each run; None: the script's `[state]`."""
    resolution: Resolution | None = None
    """How awakeables and promises are answered; None: each target's default."""
    results_dir: Path | None = None
    """Where a command's log is kept when the command cannot be swept; None: $PAIDTWICE_RESULTS, else
    paidtwice-results, where the records go."""

    @property
    def user_code(self) -> bool:
        """The user's own code (an app or a command), not the deck's agent."""
        return self.app is not None or self.command is not None

    def build(self, *, seed: int) -> list[Target]:
        """The targets, each checked (the app imported, the command started once and asked what it serves):
        `UsageError` in one line otherwise. `seed` makes the inputs of handlers given none."""
        targets: list[Target]
        if self.handler and not self.service:
            raise UsageError("a handler is named with its service: SERVICE/HANDLER, or service and handler")
        named = [f"{self.service}/{self.handler or ''}".rstrip("/")] if self.service else []
        wanted = [*self.handlers, *named]
        if self.command is not None:
            targets = [
                *CommandTarget.discovered(
                    self.command,
                    wanted,
                    self.input,
                    cwd=self.app_dir,
                    port_env=self.port_env,
                    seed=seed,
                    results_dir=self.results_dir,
                )
            ]
        elif self.app is None:
            targets = [*DeckTarget.each(self.modes)]
        else:
            targets = [*AppTarget.discovered(self.app, wanted, self.input, app_dir=self.app_dir, seed=seed)]
        if self.key is not None:
            targets = [dataclasses.replace(t, key=self.key) for t in targets]
        if self.state is not None:
            entries = state_entries(self.state, "the state")
            targets = [dataclasses.replace(t, state=entries) for t in targets]
        if self.resolution is not None:
            targets = [dataclasses.replace(t, resolution=self.resolution) for t in targets]
        return targets

    def code(self) -> Target:
        """The one target whose code replay-check runs journals against, whichever of its handlers they
        name (`service` and `handler` left empty): the app, the deck's agent in its one mode, or the
        command. Nothing is imported or started here: the replayer loads the app and says in one line what
        does not load, and a kind that cannot be replayed offline says so (`Target.offline`)."""
        where = None if self.app_dir is None else str(self.app_dir)
        if self.command is not None:
            return CommandTarget(self.command, "", "", None, self.command, cwd=where, port_env=self.port_env)
        if self.app is not None:
            return AppTarget(self.app, "", "", None, mode=self.app, cwd=where)
        if len(self.modes) != 1:
            raise UsageError("the deck's agent replays in one mode: naive or journaled")
        [deck] = DeckTarget.each(self.modes)
        return deck
