"""What an offline replay found: a verdict per journal, the model calls made outside the journal."""

from __future__ import annotations

from paidtwice._exceptions import PaidtwiceError, UsageError
from paidtwice.results import OutsideCall, ReplayResult

__all__ = [
    "VERDICTS",
    "AppError",
    "OutsideCall",
    "ReplayDivergence",
    "ReplayResult",
]

VERDICTS = ("replays", "continues", "diverges", "fails", "undecided")


class AppError(UsageError):
    """The app cannot be loaded, or does not have the service or handler a journal is of."""


class ReplayDivergence(PaidtwiceError):
    """A journal did not replay on the code (raised by `replay_journal` unless told not to)."""

    def __init__(self, result: ReplayResult) -> None:
        super().__init__(result.describe())
        self.result = result
        """The replay's result."""
