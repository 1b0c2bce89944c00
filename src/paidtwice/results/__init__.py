"""Results: the records paidtwice measures, their kinds, and the one writer and reader of their JSON files.

The deck, `run`, `sweep`, `check`, `soak`, `replay-check` and `watch` write records here; `paidtwice report`
and `watch --profile` read them back. Each kind of record (`kinds()`) is a frozen dataclass with a docstring
under every field; its JSON is its fields, tagged with the results format and the kind. Every command writes
its records through one `RecordSink` (each record on disk as it is added, the file replaced atomically).

Adding a kind of record:
1. a module here with its frozen dataclass (a docstring under every field), exported from this face;
2. its row in `kinds()` (`_kinds`), naming its group; the writer and the reader follow the row;
3. `.venv/bin/python scripts/record_schemas.py` writes its schema (docs/reference/schemas/).
A kind in a group of its own also needs the group's row in `groups()`, its field in `Results` and its page
in `paidtwice.report.PAGES`. tests/results/test_kinds.py fails on a kind registered half way.
"""

from paidtwice.results._deck import (
    AttemptLine,
    Check,
    ComparisonRecord,
    CurvePoint,
    CurveRecord,
    Expected,
    Mismatch,
    ModelLogLine,
    NodeKillRecord,
    Record,
    RecordedStatus,
    RecoveryBreakdown,
    RecoveryRecord,
    RecoveryStep,
    RunRecord,
    ToolLogLine,
)
from paidtwice.results._kinds import (
    RESULTS_FORMAT,
    Group,
    Kind,
    groups,
    kind_of,
    kinds,
    record_json,
    tagged,
    to_jsonable,
)
from paidtwice.results._read import Results, load_results
from paidtwice.results._replay import OutsideCall, ReplayResult
from paidtwice.results._soak import KillSnapshot, NodeKillLine, PeakMemory, SoakRecord
from paidtwice.results._sweep import (
    CleanRun,
    Coverage,
    CrashKind,
    CrashPoint,
    KillsPlaced,
    PointResult,
    SweepMatrix,
)
from paidtwice.results._watch import AttemptCost, Reason, StuckInvocation, WatchSnapshot, WayOutLine
from paidtwice.results._write import (
    DEFAULT_RESULTS,
    RESULTS_ENV,
    RecordSink,
    default_records_path,
    results_text,
    write_record,
    write_results,
)

__all__ = [
    "DEFAULT_RESULTS",
    "RESULTS_ENV",
    "RESULTS_FORMAT",
    "AttemptCost",
    "AttemptLine",
    "Check",
    "CleanRun",
    "ComparisonRecord",
    "Coverage",
    "CrashKind",
    "CrashPoint",
    "CurvePoint",
    "CurveRecord",
    "Expected",
    "Group",
    "KillSnapshot",
    "KillsPlaced",
    "Kind",
    "Mismatch",
    "ModelLogLine",
    "NodeKillLine",
    "NodeKillRecord",
    "OutsideCall",
    "PeakMemory",
    "PointResult",
    "Reason",
    "Record",
    "RecordSink",
    "RecordedStatus",
    "RecoveryBreakdown",
    "RecoveryRecord",
    "RecoveryStep",
    "ReplayResult",
    "Results",
    "RunRecord",
    "SoakRecord",
    "StuckInvocation",
    "SweepMatrix",
    "ToolLogLine",
    "WatchSnapshot",
    "WayOutLine",
    "default_records_path",
    "groups",
    "kind_of",
    "kinds",
    "load_results",
    "record_json",
    "results_text",
    "tagged",
    "to_jsonable",
    "write_record",
    "write_results",
]
