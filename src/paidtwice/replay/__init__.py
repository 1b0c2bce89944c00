"""Offline replay: will this code replay the journals already recorded? (`paidtwice replay-check`)."""

from paidtwice.replay._journal import (
    STATUSES,
    JournalFile,
    JournalFileError,
    RecordedEntry,
    capture,
    capture_journal,
    journal_paths,
    load_journal,
    save_all,
    save_invocation,
    save_journal,
    save_with_prefix,
)
from paidtwice.replay._replayer import (
    AppError,
    OutsideCall,
    ReplayDivergence,
    Replayer,
    ReplayResult,
    kept_journal_judge,
    load_app,
)
from paidtwice.replay._saved import save_point_journals, save_record_journals
from paidtwice.replay._seed import random_seed

__all__ = [
    "STATUSES",
    "AppError",
    "JournalFile",
    "JournalFileError",
    "OutsideCall",
    "RecordedEntry",
    "ReplayDivergence",
    "ReplayResult",
    "Replayer",
    "capture",
    "capture_journal",
    "journal_paths",
    "kept_journal_judge",
    "load_app",
    "load_journal",
    "random_seed",
    "save_all",
    "save_invocation",
    "save_journal",
    "save_point_journals",
    "save_record_journals",
    "save_with_prefix",
]
