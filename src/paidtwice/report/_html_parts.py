"""What every part of the HTML report shares: the palette, a `Section`, escaping, anchors, tables, verdicts
and the bill of a model call."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from paidtwice.report._text import usd

__all__ = [
    "BLUE",
    "GREEN",
    "GREY",
    "ORANGE",
    "OUTCOMES",
    "PURPLE",
    "SKY",
    "VERMILLION",
    "YELLOW",
    "Section",
    "bill_words",
    "esc",
    "html_table",
    "slug",
    "verdict_mark",
]

# Okabe & Ito's palette.
BLUE, SKY, GREEN, ORANGE, VERMILLION, PURPLE, YELLOW, GREY = (
    "#0072B2",
    "#56B4E9",
    "#009E73",
    "#E69F00",
    "#D55E00",
    "#CC79A7",
    "#F0E442",
    "#999999",
)

OUTCOMES: dict[str, tuple[str, str, str]] = {
    # outcome -> (fill, letter on the bar, words)
    "completed": (GREEN, "C", "completed"),
    "ended": (GREEN, "E", "ended"),
    "suspended": (SKY, "S", "suspended"),
    "RT0016": (VERMILLION, "M", "journal mismatch (RT0016)"),
    "cut off": (ORANGE, "K", "cut off by the kill"),
    "agent down": (GREY, "D", "refused: the agent was down"),
}


@dataclass(frozen=True)
class Section:
    """One part of the page, with its place in the contents."""

    id: str
    """Anchor of the section."""
    title: str
    """Its heading, also in the contents."""
    body: str
    """Its HTML."""


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def slug(*parts: object) -> str:
    return "-".join("".join(c if c.isalnum() else "_" for c in str(p)) for p in parts)


def html_table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "") -> str:
    """A table of already-escaped cells."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def verdict_mark(ok: bool) -> str:
    return '<span class="ok verdict">✓ matches</span>' if ok else '<span class="bad verdict">✗ DIFFERS</span>'


# -- bills (tokens and dollars, when the record has them) ----------------------------------------------------


def bill_words(line: object) -> str:
    """Tokens and cost of one model call, read from whichever fields the record carries; "" if none."""
    usage = getattr(line, "usage", None)
    tokens_in = _field(usage, "prompt_tokens", "input_tokens") if usage is not None else None
    tokens_out = _field(usage, "completion_tokens", "output_tokens") if usage is not None else None
    tokens_in = tokens_in if tokens_in is not None else _field(line, "prompt_tokens", "tokens_in")
    tokens_out = tokens_out if tokens_out is not None else _field(line, "completion_tokens", "tokens_out")
    cost = _field(line, "cost_usd")
    parts = []
    if tokens_in is not None or tokens_out is not None:
        parts.append(
            f"{tokens_in if tokens_in is not None else '?'} in / "
            f"{tokens_out if tokens_out is not None else '?'} out tokens"
        )
    if isinstance(cost, int | float):
        parts.append(usd(cost))
    return ", ".join(parts)


def _field(value: object, *names: str) -> Any:
    for name in names:
        found = value.get(name) if isinstance(value, dict) else getattr(value, name, None)
        if found is not None:
            return found
    return None
