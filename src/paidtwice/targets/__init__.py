"""What paidtwice sweeps, soaks and replays: a target, one Restate handler of one deployment.

Three kinds, one protocol (`Target`, in `_target`), so the deck, the sweep, the soak, `lab up` and the pytest
helpers never ask which kind they hold (each starts its agent through `Lab.launch`); a `TargetSpec` (`_spec`)
is the targets as a user names them, built and checked once:

    DeckTarget      the deck's weather agent in one mode            served by paidtwice's host   (_app)
    AppTarget       a user's Python app, MODULE:APP or MODULE       served by paidtwice's host   (_app)
    CommandTarget   a deployment in any language, `--cmd CMD`       behind a protocol proxy      (_command)

Adding a kind (a deployment already running somewhere, say) touches four files:
1. a module here with its class, a frozen dataclass with `Target`'s fields and methods (`Target` says what
   each does: a `checked` constructor, `recorded_as`, `offline`, `launch` returning its `Agent` and `Trace`),
   and its name exported from this face;
2. its field and branch in `TargetSpec` (`_spec`: `build` and `code`);
3. its option in `paidtwice.cli._target.target_options`, passed to `TargetSpec`: every command that takes
   a target (sweep, record, replay-check, soak, watch, lab up, recover) takes the new kind with it.
tests/cli/test_target_kinds.py fails on a kind without its option or its branch. Its `Agent` subclasses
`paidtwice.agent.LeasedAgent`, as `AgentHost` (`_host`) and `CommandHost` do; its `Trace` may reuse one.
"""

from __future__ import annotations

from paidtwice.agent import WireStep, command_label, node_path
from paidtwice.targets._app import DECK_MODES, AppTarget, DeckTarget, HostTrace, check_app
from paidtwice.targets._command import CommandTarget, WireTrace
from paidtwice.targets._discovery import discover
from paidtwice.targets._host import AgentHost
from paidtwice.targets._spec import TargetSpec
from paidtwice.targets._step_log import gate_name
from paidtwice.targets._target import Agent, Launch, OfflineApp, Resolution, Target, Trace
from paidtwice.targets._timeline import COMPLETE_KINDS, WAIT_KINDS

__all__ = [
    "COMPLETE_KINDS",
    "DECK_MODES",
    "WAIT_KINDS",
    "Agent",
    "AgentHost",
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
    "gate_name",
    "node_path",
]
