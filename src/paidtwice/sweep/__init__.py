"""`paidtwice sweep`: kill a target at every moment of a clean run and measure what each replay paid again.

    _sweep     the sweep: clean runs, their crash points, one run per point, the matrices (`sweep`,
               `sweep_targets`)
    _schedule  when the runs start: every clean run at once, a kept plan's points beside it, the others'
               as their clean run shows them; a point the clean run does not confirm thrown away
    _kept      the plan kept from the last sweep of the same code: its key, its file, `same_plan`
    _runs      one run of a target on an agent of its own, and the clean run
    _point     a point's run (stop at the moment, kill, restart, measure), run again when its kill missed
    _options   the options as frozen objects: `Answers`, `ModelStub`, `KillPlan`
    _missed    why a point's kill missed its moment, where its journal tells (`short_pause`)
    _approvals the awakeables and Workflow promises a run waits for, resolved as a person would
    _reach     `--every-tool`: runs whose answers call each offered tool no answer called, swept too

What is swept is a target (`paidtwice.targets`): the kinds differ in how their agent starts and what their
runs show; the sweep asks the target, never which kind it is.
"""

from __future__ import annotations

from paidtwice.sweep._missed import short_pause
from paidtwice.sweep._options import DEFAULT_RETRIES, Answers, KillPlan, ModelStub, Shard, shard_of
from paidtwice.sweep._runs import DEFAULT_KEY, NO_MODEL_CALL
from paidtwice.sweep._sweep import deck_scripts, record_answers, sweep, sweep_targets

__all__ = [
    "DEFAULT_KEY",
    "DEFAULT_RETRIES",
    "NO_MODEL_CALL",
    "Answers",
    "KillPlan",
    "ModelStub",
    "Shard",
    "deck_scripts",
    "record_answers",
    "shard_of",
    "short_pause",
    "sweep",
    "sweep_targets",
]
