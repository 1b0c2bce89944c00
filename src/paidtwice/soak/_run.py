"""Load with faults: many journaled invocations at once, the agent killed and restarted while they run, and
on a cluster, its nodes killed and restarted one at a time.

Nothing may be lost, and journaling bounds what the kills cost. The bound is counted from each kill (the
journal read at the kill, the killed process's calls counted at the end), apart from the count it bounds:
a model call the dead agent made is paid again by the replay only if its answer is not in the journal when
the replacement starts, whether the call was still open at the kill or its answer had come back but not
reached the journal. The count it bounds is the stub's ledger at the end, less the clean count per
invocation, which is measured on a clean invocation before the soak.

A soak runs in four phases, a module each: setup (`_setup.py`: the agent started, the clean invocation),
drive (`_drive.py`: the waves, the agent's kills, the node kills in `_node_kills.py`), settle (the
monitor's wait, `_monitor.py`) and record (`_tally.py`). What it drives, the deck's agent or a user's app,
is decided once (`_subject.py`); how hard it pushes is one `SoakOptions` (`_options.py`).

Every figure scales with the work: the ledger is indexed by lane and invocation, the server is asked for
counts per status (one query) and, at each kill, for the Run entries of the invocations not completed before
it (one query), never for each invocation by id.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from paidtwice._exceptions import LabCancelled
from paidtwice.agent import AgentAttempt, renamed_service
from paidtwice.engine import RestateCluster
from paidtwice.lab import Lab
from paidtwice.results import SoakRecord
from paidtwice.soak._drive import Driven, Driver
from paidtwice.soak._monitor import Monitor, SoakProgress
from paidtwice.soak._options import SoakOptions
from paidtwice.soak._setup import set_up
from paidtwice.soak._subject import DECK, soaked
from paidtwice.soak._tally import Ended, tally
from paidtwice.stub import SCRIPTS, Script, auto_script
from paidtwice.targets import Target

__all__ = ["SoakInterrupted", "soak"]


class SoakInterrupted(LabCancelled):
    """Ctrl-C or SIGTERM stopped a soak: `record` says what it measured until then (its `gave_up` says
    "interrupted", and the invocations still running count as unfinished)."""

    def __init__(self, record: SoakRecord) -> None:
        super().__init__("interrupted")
        self.record = record
        """The soak's record as the server and the stub's ledger stood at the interruption."""


def soak(
    lab: Lab,
    options: SoakOptions | None = None,
    *,
    target: Target = DECK,
    script: Script | None = None,
    progress: Callable[[SoakProgress], None] | None = None,
) -> SoakRecord:
    """Soak one journaled agent on `lab` as `options` say (default: `SoakOptions()`, 200 invocations and 5
    kills).

    `target` is any `paidtwice.targets.Target` whose model calls the stub can tell apart by invocation: the
    deck's journaled agent (default; a `DeckTarget` also serves an app that reads the deck agent's
    environment), or a user's app as an `AppTarget` (its service, handler and input; see `soak_target`).
    Its agent is started through the target (`Target.launch`). A kind the soak cannot count (a command's
    deployment: `Target.not_soakable`) raises a `UsageError` before anything starts. The stub answers by
    `script` (default: the steady script the deck's agent is written for, and for a user's app the auto
    answers made from each request, as the sweep's `--script auto`). A clean invocation whose calls never
    reach the stub, or that the script does not answer, raises a `UsageError` before the soak starts.

    The soak waits until every invocation completed or paused, for at most `options.deadline` seconds,
    and gives up early when none settled for `options.stall` seconds. `progress`, if given, is called about
    every `options.progress_every` seconds. Ctrl-C or SIGTERM raises `SoakInterrupted` with what it
    measured until then.
    """
    options = options or SoakOptions()
    server = lab.server
    options.check(cluster=len(server.nodes) if isinstance(server, RestateCluster) else 1)
    subject = soaked(target)
    served_as = renamed_service(subject.service, f"soak_{lab.next_id()}")
    answers = script or (SCRIPTS["steady"] if target.deck_stub else auto_script("steady"))
    lane = lab.stub.open_lane(answers, name=served_as.lower())
    with subject.agent(lab, lane, served_as) as agent:
        clean = set_up(lab, subject, agent, lane, served_as)
        monitor = Monitor(lab, served_as, agent, options, progress)
        driven = Driven()
        ended = _drive_and_settle(Driver(lab, options, clean, agent, lane, monitor, driven))
    waves = options.waves() if options.node_kills else ()
    # Read once the agent has stopped: its lives' peaks are those sampled while they ran.
    memory = monitor.peak_memory()
    record = tally(lab, clean, driven, ended, memory, lane=lane, waves=waves, app=subject.label)
    if ended.interrupted:
        raise SoakInterrupted(record)
    return record


def _drive_and_settle(driver: Driver) -> Ended:
    """Drive the soak, then wait until every invocation settled; how it ended, interrupted or not."""
    monitor, options = driver.monitor, driver.options
    interrupted, attempts = False, list[AgentAttempt]()
    monitor.start()
    try:
        driver.drive()
        gave_up = monitor.wait_settled(options.invocations + 1, options.deadline, options.stall)
    except (KeyboardInterrupt, LabCancelled):
        # Ctrl-C or SIGTERM: what was sent so far is read from the server (which still runs) before the lab
        # stops it, and handed back in `SoakInterrupted`.
        interrupted, gave_up = True, "interrupted"
    finally:
        wall = time.time() - monitor.started
        monitor.stop()
    if driver.driven.kills or driver.driven.node_events:
        attempts = driver.agent.attempts()  # once, for every kill's count
    return Ended(
        started=monitor.started,
        wall=wall,
        gave_up=gave_up,
        interrupted=interrupted,
        attempts=attempts,
    )
