"""What paidtwice sweeps, soaks and replays: a target, one Restate handler of one deployment.

Three kinds, one protocol (`Target`, in `_target`):

    DeckTarget      the deck's weather agent in one mode            served by paidtwice's host   (_app)
    AppTarget       a user's Python app, MODULE:APP or MODULE       served by paidtwice's host   (_app)
    CommandTarget   a deployment in any language, `--cmd CMD`       behind a protocol proxy      (_command)

The sweep, the soak and the pytest helpers take a target and never ask which kind it is. A `TargetSpec` is
the targets as a user names them (an app, a command, the deck's modes), built into checked targets once.

Adding a kind (a deployment already running somewhere, say) touches four files:
1. a module here with its class (below), and its name exported from this face;
2. its field and branch in `TargetSpec` (`_spec`: `build` and `code`);
3. its option in `paidtwice.cli._target.target_options`, passed to `TargetSpec`: every command that takes
   a target (sweep, record, replay-check, soak, watch, lab up, recover) takes the new kind with it.
tests/cli/test_target_kinds.py fails on a kind without its option or its branch.

The class is a frozen dataclass that has:
- the fields every target has: `mode`, `service`, `handler`, `input`, `input_made`, `env`, `key`, `state`,
  `resolution`, `stuck_after` (`Target` says what each means);
- a constructor that checks the user's input before anything starts and raises `UsageError` in one line
  (as `AppTarget.checked`, `CommandTarget.checked`): the service and handler it serves, its directory;
- `recorded_as()`: the service, handler and input a point's record names;
- `offline() -> OfflineApp`: the Python app replay-check imports to replay its journals in its own process
  (or `UsageError` in one line, as a command's kind says: its code is not Python paidtwice imports);
- `launch(Launch) -> (Agent, Trace)`: the process the lab kills for one run, and what that run shows.
  The `Agent` (`_target.Agent`) starts, is killed, loads a replacement ahead (`prepare`/`wait_ready`, a
  no-op where it cannot) and listens again at a given time (`release(at)`/`wait_up`); an implementation
  subclasses `paidtwice.agent._process.LeasedAgent` for its port, address and context manager, and waits
  with `wait_alive`. The `Trace` (`_target.Trace`) reads the run: its crash points, whether the run is
  stopped at a point's moment, its steps (executions, in flight at a kill, model calls inside them), how
  many model calls it saw, and whether the handler recovers explicitly. A kind that sees the wire reuses
  `WireTrace`; one served by paidtwice's host, `HostTrace`.
"""

from __future__ import annotations

from paidtwice.agent import WireStep, command_label, node_path
from paidtwice.targets._app import DECK_MODES, AppTarget, DeckTarget, HostTrace, check_app
from paidtwice.targets._command import CommandTarget, WireTrace
from paidtwice.targets._discovery import discover
from paidtwice.targets._spec import TargetSpec
from paidtwice.targets._target import Agent, Launch, OfflineApp, Resolution, Target, Trace
from paidtwice.targets._timeline import COMPLETE_KINDS, WAIT_KINDS

__all__ = [
    "COMPLETE_KINDS",
    "DECK_MODES",
    "WAIT_KINDS",
    "Agent",
    "AppTarget",
    "CommandTarget",
    "DeckTarget",
    "HostTrace",
    "Launch",
    "OfflineApp",
    "Resolution",
    "Target",
    "TargetSpec",
    "Trace",
    "WireStep",
    "WireTrace",
    "check_app",
    "command_label",
    "discover",
    "node_path",
]
