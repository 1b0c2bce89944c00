"""In production: `paidtwice watch`, the invocations paying twice right now, priced, with metrics.

Read-only. `Scanner` reads every invocation retrying after a failure, or paused, off a running Restate (as
`explain` and `recover` read one), prices its attempts from a profile (`load_profile`), and `Watch` does what
follows each snapshot: Prometheus metrics (`MetricsServer`), the pause hook, the JSON file.
"""

from paidtwice.results import AttemptCost, StuckInvocation, WatchSnapshot, WayOutLine
from paidtwice.watch._loop import Watch, snapshot_json
from paidtwice.watch._metrics import MetricsServer, parse_listen
from paidtwice.watch._profile import Profile, load_profile
from paidtwice.watch._scan import JudgeFor, Scanner, check_profile

__all__ = [
    "AttemptCost",
    "JudgeFor",
    "MetricsServer",
    "Profile",
    "Scanner",
    "StuckInvocation",
    "Watch",
    "WatchSnapshot",
    "WayOutLine",
    "check_profile",
    "load_profile",
    "parse_listen",
    "snapshot_json",
]
