"""The page of any results: each group of records (`paidtwice.results.groups()`) has its part here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from paidtwice.report._html import Section, deck_sections, replay_check_section, soak_section, sweep_sections
from paidtwice.report._watch import watch_section
from paidtwice.results import Results, groups

__all__ = ["PAGES", "results_sections"]

PAGES: dict[str, Callable[[Sequence[Any]], list[Section]]] = {
    "records": deck_sections,
    "points": sweep_sections,
    "replays": lambda results: [replay_check_section(results)],
    "soaks": lambda soaks: [soak_section(soak) for soak in soaks],
    "watches": lambda snapshots: [watch_section(snapshot) for snapshot in snapshots],
}
"""The sections of each group's records, by `Group.name`."""


def results_sections(results: Results) -> tuple[list[Section], list[str]]:
    """The page's sections of every group the results hold, in `groups()`'s order, and what the groups
    held are called (the page's title names them)."""
    sections: list[Section] = []
    words: list[str] = []
    for group in groups():
        records = getattr(results, group.name)
        if records:
            sections += PAGES[group.name](records)
            words.append(group.word)
    return sections, words
