"""Reports: the deck table, journals by index, model-call logs, mismatches, curves and their plot, and one
self-contained HTML page of a deck, a sweep, a soak or a replay-check."""

from paidtwice.report._html import (
    Section,
    deck_sections,
    html_page,
    replay_check_section,
    soak_section,
    sweep_sections,
    write_html,
)
from paidtwice.report._plot import curve_svg, curve_svg_markup
from paidtwice.report._replay import format_replay_check
from paidtwice.report._soak import format_soak, format_soak_progress
from paidtwice.report._text import (
    format_attempt_log,
    format_bill,
    format_checks,
    format_comparison,
    format_crash_cost,
    format_curve,
    format_deck_table,
    format_journal,
    format_mismatch,
    format_model_log,
    format_plan,
    format_run,
    format_sweep,
    format_walk,
    table,
)
from paidtwice.results import Results, load_results

__all__ = [
    "Results",
    "Section",
    "curve_svg",
    "curve_svg_markup",
    "deck_sections",
    "format_attempt_log",
    "format_bill",
    "format_checks",
    "format_comparison",
    "format_crash_cost",
    "format_curve",
    "format_deck_table",
    "format_journal",
    "format_mismatch",
    "format_model_log",
    "format_plan",
    "format_replay_check",
    "format_run",
    "format_soak",
    "format_soak_progress",
    "format_sweep",
    "format_walk",
    "html_page",
    "load_results",
    "replay_check_section",
    "soak_section",
    "sweep_sections",
    "table",
    "write_html",
]
