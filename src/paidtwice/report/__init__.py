"""Reports: the deck table, journals by index, model-call logs, mismatches, curves and their plot."""

from paidtwice.report._plot import curve_svg
from paidtwice.report._soak import format_soak, format_soak_progress
from paidtwice.report._text import (
    format_attempt_log,
    format_checks,
    format_curve,
    format_deck_table,
    format_journal,
    format_mismatch,
    format_model_log,
    format_plan,
    format_run,
    format_walk,
    table,
)

__all__ = [
    "curve_svg",
    "format_checks",
    "format_curve",
    "format_deck_table",
    "format_journal",
    "format_mismatch",
    "format_plan",
    "format_walk",
    "format_attempt_log",
    "format_model_log",
    "format_run",
    "format_soak",
    "format_soak_progress",
    "table",
]
