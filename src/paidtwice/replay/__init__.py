"""Offline replay: will this code replay the journals already recorded? (`paidtwice replay-check`)."""

from paidtwice.replay._journal import (
    JournalFile,
    JournalFileError,
    RecordedEntry,
    capture,
    capture_journal,
    load_journal,
    save_journal,
)
from paidtwice.replay._replayer import (
    AppError,
    OutsideCall,
    ReplayDivergence,
    Replayer,
    ReplayResult,
    load_app,
)
from paidtwice.replay._seed import random_seed

__all__ = [
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
    "load_app",
    "load_journal",
    "random_seed",
    "save_journal",
]
