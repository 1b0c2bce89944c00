"""One self-contained HTML report of a deck, a run, a sweep, a soak or a replay-check.

The page needs nothing but itself: CSS and SVG are inline, there is no script and no request, so it opens
from disk, attaches to a CI run or a pull request, and prints to PDF. Colours are Okabe and Ito's palette
(distinguishable with the common colour-vision deficiencies) and every colour's meaning is also in words:
a legend, a letter or label on the mark, a tooltip, and the tables beside each plot.

A page is a list of `Section`s; each kind of result has one function that makes its sections
(`deck_sections`, `sweep_sections`, `soak_section`, `replay_check_section`).
"""

from __future__ import annotations

import html
import itertools
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from paidtwice._words import agent_name, count
from paidtwice.engine._admin import AdminCall
from paidtwice.engine._sql import JournalEntry
from paidtwice.lab._records import (
    AttemptLine,
    Check,
    ComparisonRecord,
    CurveRecord,
    Mismatch,
    ModelLogLine,
    Record,
    RecoveryRecord,
    RunRecord,
    ToolLogLine,
)
from paidtwice.lab._soak import SoakRecord
from paidtwice.lab._sweep import PointResult
from paidtwice.replay._replayer import ReplayResult
from paidtwice.report._plot import curve_svg_markup

__all__ = [
    "Section",
    "deck_sections",
    "html_page",
    "replay_check_section",
    "soak_section",
    "sweep_sections",
    "write_html",
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

_OUTCOMES: dict[str, tuple[str, str, str]] = {
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


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _slug(*parts: object) -> str:
    return "-".join("".join(c if c.isalnum() else "_" for c in str(p)) for p in parts)


def _epoch(stamp: str) -> float | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "") -> str:
    """A table of already-escaped cells."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _verdict(ok: bool) -> str:
    return '<span class="ok">✓ matches</span>' if ok else '<span class="bad">✗ DIFFERS</span>'


# -- bills (tokens and dollars, when the record has them) ----------------------------------------------------


def _bill(line: object) -> str:
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
        parts.append(f"${cost:.6f}")
    return ", ".join(parts)


def _field(value: object, *names: str) -> Any:
    for name in names:
        found = value.get(name) if isinstance(value, dict) else getattr(value, name, None)
        if found is not None:
            return found
    return None


# -- the timeline --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Timeline:
    """What a timeline draws, from a run's record or a sweep point's."""

    id: str
    killed: str
    """What the kill stopped: "agent" or "restate-server"."""
    started_at: float | None
    killed_at: float | None
    down_time: float | None
    attempts: tuple[AttemptLine, ...]
    model_calls: tuple[ModelLogLine, ...]
    tools: tuple[ToolLogLine, ...]
    journal: tuple[JournalEntry, ...]
    end: float


def _timeline_of(record: RunRecord | PointResult, anchor: str) -> _Timeline:
    journal_times = [t for t in (_journal_at(record.started_at, e) for e in record.journal) if t is not None]
    times = [
        *(a.ended or a.at or 0.0 for a in record.attempt_log),
        *(c.finished or c.at for c in record.model_log),
        *journal_times,
    ]
    if record.killed_at is not None:
        times.append(record.killed_at + (record.down_time or 0.0))
    return _Timeline(
        id=anchor,
        killed="restate-server" if "restate-server" in getattr(record, "fault", "") else "agent",
        started_at=record.started_at,
        killed_at=record.killed_at,
        down_time=record.down_time,
        attempts=record.attempt_log,
        model_calls=record.model_log,
        tools=record.tool_log,
        journal=record.journal,
        end=max(times, default=1.0),
    )


def _journal_at(started_at: float | None, entry: JournalEntry) -> float | None:
    if started_at is None or not entry.appended_at:
        return None
    at = _epoch(entry.appended_at)
    return None if at is None else at - started_at


def _ticks(end: float) -> list[float]:
    raw = end / 6 or 1.0
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [i * step for i in range(int(end / step) + 1)]


_LANES = ("attempts", "agent", "model calls", "tool calls", "journal")


def timeline_svg(tl: _Timeline) -> str:
    """Attempts, the kill and the down time, model calls, tool calls and journal entries on one time axis."""
    width, left, right, lane_h, top = 960, 92, 16, 30, 8
    end = tl.end * 1.04 + 0.05
    height = top + lane_h * len(_LANES) + 34

    def x(t: float) -> float:
        return left + (width - left - right) * max(0.0, t) / end

    def y(lane: str) -> float:
        return top + lane_h * _LANES.index(lane)

    out = [
        f'<svg class="timeline" id="{tl.id}" data-attempts="{len(tl.attempts)}" '
        f'data-model-calls="{len(tl.model_calls)}" viewBox="0 0 {width} {height}" width="100%" '
        f'role="img" aria-label="timeline: {len(tl.attempts)} attempts, {len(tl.model_calls)} model calls, '
        f'{len(tl.journal)} journal entries" xmlns="http://www.w3.org/2000/svg">',
    ]
    for lane in _LANES:
        out.append(
            f'<text class="lane" x="{left - 6}" y="{y(lane) + lane_h / 2 + 4}" '
            f'text-anchor="end">{lane}</text>'
            f'<line x1="{left}" x2="{width - right}" y1="{y(lane) + lane_h}" y2="{y(lane) + lane_h}" '
            'stroke="#ddd"/>'
        )
    axis_y = top + lane_h * len(_LANES)
    for t in _ticks(end):
        out.append(
            f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{top}" y2="{axis_y + 4}" stroke="#eee"/>'
            f'<text x="{x(t):.1f}" y="{axis_y + 16}" text-anchor="middle">{t:g}</text>'
        )
    out.append(
        f'<text x="{width - right}" y="{axis_y + 30}" text-anchor="end">seconds from the run\'s start</text>'
    )

    # The kill and the down time, behind everything else.
    if tl.killed_at is not None:
        kill = tl.killed_at
        up = kill + (tl.down_time or 0.0)
        out.append(
            f'<rect class="down" x="{x(kill):.1f}" y="{top}" width="{max(1.0, x(up) - x(kill)):.1f}" '
            f'height="{lane_h * len(_LANES)}" fill="url(#hatch)" opacity="0.45">'
            f"<title>{tl.killed} down {up - kill:.2f} s (from the kill at {kill:.2f} s until it listened "
            "again)"
            "</title></rect>"
            f'<line class="kill" x1="{x(kill):.1f}" x2="{x(kill):.1f}" y1="{top}" y2="{axis_y}" '
            f'stroke="{VERMILLION}" stroke-width="2"/>'
            f'<text x="{x(kill) + 3:.1f}" y="{y("agent") + 19}" class="mark">{tl.killed} killed at '
            f"{kill:.2f} s; down {up - kill:.2f} s</text>"
        )

    # Attempts that found the agent down have no time on record: they are drawn spread over the down time.
    down = [a for a in tl.attempts if a.at is None]
    down_slots: dict[int, float] = {}
    if down:
        lo = tl.killed_at if tl.killed_at is not None else 0.0
        span = tl.down_time or 0.0
        for i, attempt in enumerate(down, start=1):
            down_slots[attempt.number] = lo + span * i / (len(down) + 1)
    for attempt in tl.attempts:
        fill, letter, words = _OUTCOMES.get(attempt.outcome, (PURPLE, "E", attempt.outcome))
        if attempt.at is None:
            at = down_slots[attempt.number]
            x0, w = x(at) - 5, 10.0
            when = "time not recorded (it found the agent down, during the down time)"
        else:
            stop = attempt.ended
            if stop is None:
                stop = tl.killed_at if attempt.outcome == "cut off" and tl.killed_at else attempt.at
            x0, w = x(attempt.at), max(6.0, x(stop) - x(attempt.at))
            when = f"{attempt.at:.2f} s" + (f" to {stop:.2f} s" if stop > attempt.at else "")
        out.append(
            f'<g class="attempt" data-outcome="{_e(attempt.outcome)}">'
            f'<rect x="{x0:.1f}" y="{y("attempts") + 5}" '
            f'width="{w:.1f}" height="{lane_h - 10}" fill="{fill}" stroke="#333" stroke-width="0.5"/>'
            f"<title>attempt {attempt.number}: {_e(words)}; {when}</title>"
            + (
                f'<text x="{x0 + w / 2:.1f}" y="{y("attempts") + 19}" text-anchor="middle" '
                f'class="letter">{letter}</text>'
                if w >= 9
                else ""
            )
            + "</g>"
        )

    for call in tl.model_calls:
        stop = call.finished if call.finished is not None else tl.end
        cut = call.delivered is not True
        state = "delivered" if call.delivered else ("cut off" if call.delivered is False else "in flight")
        x0, w = x(call.at), max(6.0, x(stop) - x(call.at))
        bill = _bill(call)
        out.append(
            f'<g class="model-call" data-delivered="{_e(state)}">'
            f'<rect x="{x0:.1f}" y="{y("model calls") + 5}" width="{w:.1f}" height="{lane_h - 10}" '
            f'fill="{"url(#hatch)" if cut else BLUE}" stroke="{VERMILLION if cut else BLUE}" '
            'stroke-width="1.5"/>'
            f"<title>model call {call.call} (turn {call.turn}, ask {call.ask}): {state}; {call.at:.2f} s to "
            f"{stop:.2f} s; {_e(call.answer)}{'; ' + _e(bill) if bill else ''}</title>"
            f'<text x="{x0 + w + 2:.1f}" y="{y("model calls") + lane_h / 2 + 3}" '
            f'class="tiny">{call.call}{" cut off" if cut else ""}</text></g>'
        )

    for tool in tl.tools:
        cx = x(tool.at)
        ty = y("tool calls") + lane_h / 2
        out.append(
            f'<g class="tool-call"><path d="M{cx:.1f},{ty - 7} l7,7 l-7,7 l-7,-7 z" fill="{YELLOW}" '
            f'stroke="#333"/><title>tool {_e(tool.tool)} call {tool.call} at {tool.at:.2f} s'
            f"{'' if tool.delivered else ' (result never delivered)'}</title></g>"
        )

    for entry in tl.journal:
        appended = _journal_at(tl.started_at, entry)
        if appended is None:
            continue
        at, jy = appended, y("journal")
        out.append(
            f'<g class="journal-entry"><line x1="{x(at):.1f}" x2="{x(at):.1f}" y1="{jy + 4}" '
            f'y2="{jy + lane_h - 4}" stroke="{GREEN if entry.is_command else "#333"}" stroke-width="2"/>'
            f"<title>journal entry {entry.index}: {_e(entry.label())}, appended at {at:.2f} s</title>"
            f'<text x="{x(at) + 2:.1f}" y="{jy + 11 + 9 * (entry.index % 2)}" '
            f'class="tiny">{entry.index}</text>'
            "</g>"
        )
    out.append("</svg>")
    return "".join(out)


_LEGEND = (
    '<p class="legend">Attempts: '
    + " ".join(
        f'<span class="key" style="background:{fill}">{letter}</span> {words}'
        for fill, letter, words in _OUTCOMES.values()
        if letter != "E"
    )
    + f'. Model calls: <span class="key" style="background:{BLUE}">&nbsp;</span> answer delivered, '
    '<span class="key hatched">&nbsp;</span> cut off (the answer never reached the agent). '
    f'<span class="key" style="background:{YELLOW}">◆</span> tool call. Journal: a tick per entry, '
    "numbered by index, when the server appended it. The hatched band is the down time, from the kill "
    "(red line) until the agent listened again; an attempt refused while it was down has no time on record "
    "and is drawn inside the down time, in order.</p>"
)


# -- the parts of a run ----------------------------------------------------------------------------------


def _journal_table(journal: Sequence[JournalEntry], started_at: float | None) -> str:
    rows = []
    for entry in journal:
        at = _journal_at(started_at, entry)
        rows.append((str(entry.index), _e(entry.type), _e(entry.name), f"{at:.3f}" if at is not None else ""))
    return _table(("index", "entry", "name", "appended (s)"), rows, cls="journal")


def _model_table(log: Sequence[ModelLogLine]) -> str:
    rows = []
    for line in log:
        state = {
            True: "delivered",
            False: '<span class="bad">cut off: never delivered</span>',
            None: "in flight",
        }
        rows.append(
            (
                str(line.call),
                f"{line.at:.3f}",
                f"{line.finished:.3f}" if line.finished is not None else "",
                str(line.turn),
                str(line.ask),
                _e(line.answer),
                state[line.delivered],
                _e(_bill(line)),
            )
        )
    return _table(("call", "asked (s)", "answered (s)", "turn", "ask", "answer", "delivered", "bill"), rows)


def _attempt_table(log: Sequence[AttemptLine]) -> str:
    rows = []
    for line in log:
        fill, letter, words = _OUTCOMES.get(line.outcome, (PURPLE, "E", line.outcome))
        rows.append(
            (
                str(line.number),
                f"{line.at:.3f}" if line.at is not None else "",
                f"{line.ended:.3f}" if line.ended is not None else "",
                "yes" if line.reached_agent else "no",
                f'<span class="key" style="background:{fill}">{letter}</span> {_e(words)}',
            )
        )
    return _table(("attempt", "started (s)", "ended (s)", "reached agent", "outcome"), rows)


def mismatch_panel(mismatch: Mismatch) -> str:
    """The mismatch read against the journal: index, recorded against attempted, whether the labels agree."""
    agree = (
        '<span class="ok">yes</span>: the message\'s labels agree with the journal'
        if mismatch.labels_agree
        else '<span class="bad">NO</span>: the message\'s labels are swapped; trust the index, not the labels'
    )
    return (
        '<div class="mismatch"><h4>Journal mismatch (RT0016)</h4>'
        + _table(
            ("journal index", "the journal holds", "the code attempted", "labels agree"),
            [(str(mismatch.index), _e(mismatch.recorded), _e(mismatch.attempted), agree)],
        )
        + f"<pre>{_e(mismatch.message.strip())}</pre></div>"
    )


def _admin_table(log: Sequence[AdminCall]) -> str:
    first = log[0].at if log else 0.0
    rows = [
        (f"{c.at - first:.3f}", _e(c.method), f"<code>{_e(c.path)}</code>", str(c.status), _e(c.answer[:300]))
        for c in log
    ]
    return _table(("at (s)", "method", "path", "status", "answer"), rows, cls="admin")


def _checks_table(checks: Sequence[Check]) -> str:
    rows = [(_e(c.figure), _e(c.deck), _e(c.measured), _verdict(c.ok)) for c in checks]
    return _table(("figure", "deck", "measured", "verdict"), rows)


def run_body(record: RunRecord, anchor: str, *, judged: bool = True) -> str:
    """Everything about one run: what it was, its timeline, the deck's figures, its logs and mismatch.

    A curve's run is not `judged` against its base row's figures: the curve table judges it.
    """
    down = f", down {record.down_time:.2f} s" if record.down_time is not None else ""
    verdict = _verdict(record.matches) if judged else "Judged in the curve's table above."
    parts = [
        f"<p>{_e(record.mode)} agent, stub <b>{_e(record.stub)}</b>, fault: {_e(record.fault)}. Invocation "
        f"<code>{_e(record.invocation_id)}</code>: <b>{_e(record.status)}</b>, "
        f"{count(record.model_calls, 'model call')}, {count(record.tool_calls, 'tool call')}, "
        f"{count(record.attempts, 'attempt')}, {count(record.mismatches, 'mismatch', 'mismatches')}"
        f"{down}. {verdict}</p>",
        timeline_svg(_timeline_of(record, anchor)),
    ]
    if record.checks and judged:
        parts += ["<h4>Deck against measured</h4>", _checks_table(record.checks)]
    if record.mismatch is not None:
        parts.append(mismatch_panel(record.mismatch))
    parts += [
        '<div class="cols"><div>',
        "<h4>Journal by index</h4>",
        _journal_table(record.journal, record.started_at),
        "</div><div>",
        "<h4>Attempts</h4>",
        _attempt_table(record.attempt_log),
        "</div></div>",
        "<h4>Model calls</h4>",
        _model_table(record.model_log),
    ]
    if record.answer is not None:
        parts.append(f"<p>Answer: <q>{_e(record.answer)}</q></p>")
    return "".join(parts)


def _runs_of(record: Record) -> list[tuple[RunRecord, str]]:
    """Every run a deck row made, with its anchor."""
    if isinstance(record, RunRecord):
        return [(record, _slug("run", record.name))]
    if isinstance(record, CurveRecord | ComparisonRecord):
        return [(run, _slug("run", record.name, i)) for i, run in enumerate(record.runs, start=1)]
    return [(record.stuck_run, _slug("run", record.name, "stuck"))]


def _deck_row(record: Record) -> tuple[str, ...]:
    link = f'<a href="#{_slug("row", record.name)}">{_e(record.name)}</a>'
    if isinstance(record, CurveRecord):
        deck = " ".join(map(str, record.deck_model_calls)) + " model calls"
        measured = " ".join(str(p.model_calls) for p in record.points) + " model calls"
        return (link, "curve", _e(deck), _e(measured), _verdict(record.matches))
    if isinstance(record, RecoveryRecord):
        deck = "; ".join(c.deck for c in record.checks)
        measured = "; ".join(c.measured for c in record.checks)
        return (link, "recovery walk", _e(deck), _e(measured), _verdict(record.matches))
    if isinstance(record, ComparisonRecord):
        claim = record.checks[0] if record.checks else None
        measured = claim.measured if claim is not None else ""
        return (
            link,
            f"comparison: {_e(record.figure)}",
            _e(record.deck_says),
            _e(measured),
            _verdict(record.matches),
        )
    differing = [c.figure for c in record.checks if not c.ok]
    deck = "; ".join(f"{c.figure}: {c.deck}" for c in record.checks)
    measured = "; ".join(f"{c.figure}: {c.measured}" for c in record.checks)
    if differing:
        measured += f" (differs: {', '.join(differing)})"
    return (link, f"{_e(record.mode)}/{_e(record.stub)}", _e(deck), _e(measured), _verdict(record.matches))


def _comparison_body(comparison: ComparisonRecord) -> str:
    """The claim against what was measured, then each of the two runs with its own timeline."""
    parts = [f"<p>{_e(comparison.deck_says)}</p>", _checks_table(comparison.checks)]
    for i, run in enumerate(comparison.runs, start=1):
        parts += [f"<h4>Run {i}: {_e(run.name)}</h4>", run_body(run, _slug("run", comparison.name, i))]
    return "".join(parts)


def _curve_body(curve: CurveRecord) -> str:
    rows = []
    deck = list(curve.deck_model_calls) + [None] * len(curve.points)
    for i, (point, want) in enumerate(zip(curve.points, deck, strict=False), start=1):
        low, high = point.predicted_range
        predicted = (
            str(point.predicted_model_calls) if point.predicted_model_calls is not None else f"{low}-{high}?"
        )
        rows.append(
            (
                f'<a href="#{_slug("run", curve.name, i)}">{point.delay:g}</a>',
                f"{point.down_time:.3f}",
                str(point.attempts_while_down),
                str(point.model_calls),
                predicted,
                str(want) if want is not None else "",
                _verdict(point.predicted_model_calls == point.model_calls),
            )
        )
    parts = [
        f'<div class="plot">{curve_svg_markup(curve)}</div>',
        _table(
            ("delay (s)", "down (s)", "attempts while down", "paid calls", "predicted", "deck", ""),
            rows,
        ),
    ]
    for run, anchor in _runs_of(curve):
        parts.append(f"<h4>Delay {run.restart_delay:g} s</h4>{run_body(run, anchor, judged=False)}")
    return "".join(parts)


def _walk_body(walk: RecoveryRecord) -> str:
    steps = [
        (
            str(i),
            _e(s.action),
            str(s.status),
            _e(s.outcome),
            str(s.model_calls),
            str(s.tool_calls),
            f"<code>{_e(s.invocation_id)}</code>",
        )
        for i, s in enumerate(walk.steps, start=1)
    ]
    stuck = walk.stuck_run
    predicted = (
        f"index {walk.predicted_mismatch_at}" if walk.predicted_mismatch_at is not None else "no mismatch"
    )
    parts = [
        f"<p>Stuck invocation <code>{_e(walk.invocation_id)}</code> (from {_e(stuck.name)}: "
        f"{_e(stuck.status)} after {stuck.model_calls} model calls); fix registered as "
        f"<code>{_e(walk.fix_deployment)}</code>. Before the resume, <code>paidtwice recover</code> "
        f"predicted: {_e(predicted)}.</p>",
        "<h4>Steps of the walk</h4>",
        _table(("step", "action", "HTTP", "what followed", "model calls", "tool calls", "invocation"), steps),
        "<h4>Deck against measured</h4>",
        _checks_table(walk.checks),
    ]
    if walk.mismatch is not None:
        parts.append(mismatch_panel(walk.mismatch))
    parts += ["<h4>Admin API log of the recovery walk</h4>", _admin_table(walk.admin_log)]
    ((run, anchor),) = _runs_of(walk)
    parts.append(f"<h4>The run that left it stuck: {_e(run.name)}</h4>{run_body(run, anchor)}")
    return "".join(parts)


def _differences(record: Record) -> str:
    if isinstance(record, CurveRecord):
        wrong = [p for p in record.points if p.predicted_model_calls != p.model_calls]
        deck = " ".join(map(str, record.deck_model_calls))
        measured = " ".join(str(p.model_calls) for p in record.points)
        return _e(
            f"paid calls {measured} against the deck's {deck}; "
            f"{count(len(wrong), 'point')} {'differs' if len(wrong) == 1 else 'differ'} from the prediction"
        )
    checks = [c for c in record.checks if not c.ok]
    return "; ".join(f"{_e(c.figure)}: deck {_e(c.deck)}, measured <b>{_e(c.measured)}</b>" for c in checks)


def deck_sections(records: Sequence[Record]) -> list[Section]:
    """The deck-against-measured table with verdicts, then a section per row."""
    failed = [r for r in records if not r.matches]
    if failed:
        # What a reader of a failed CI run wants first: which rows, and which of their figures.
        items = "".join(
            f'<li><a href="#{_slug("row", r.name)}">{_e(r.name)}</a>: {_differences(r)}</li>' for r in failed
        )
        head = f'<p class="bad"><b>{len(failed)} of {len(records)} rows differ from the deck:</b></p>'
        head += f"<ul>{items}</ul>"
    else:
        head = f'<p class="ok"><b>All {len(records)} rows match the deck.</b></p>'
    sections = [
        Section(
            "deck",
            "Deck against measured",
            head
            + _table(
                ("run", "agent/stub", "the deck reports", "measured", "verdict"), map(_deck_row, records)
            )
            + _LEGEND,
        )
    ]
    for record in records:
        anchor = _slug("row", record.name)
        if isinstance(record, RunRecord):
            body = run_body(record, _slug("run", record.name))
        elif isinstance(record, CurveRecord):
            body = _curve_body(record)
        elif isinstance(record, ComparisonRecord):
            body = _comparison_body(record)
        else:
            body = _walk_body(record)
        sections.append(Section(anchor, record.name, body))
    return sections


# -- the sweep -------------------------------------------------------------------------------------------


def _ramp(share: float) -> str:
    """A sequential, colour-blind-safe ramp (light yellow to dark blue, as ColorBrewer's YlGnBu)."""
    stops = [(255, 255, 217), (199, 233, 180), (65, 182, 196), (34, 94, 168), (8, 29, 88)]
    share = min(1.0, max(0.0, share)) * (len(stops) - 1)
    i = min(int(share), len(stops) - 2)
    f = share - i
    r, g, b = (round(a + (c - a) * f) for a, c in zip(stops[i], stops[i + 1], strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def _extra(point: PointResult, by_cost: bool) -> float:
    if by_cost:
        return float(getattr(point, "extra_cost_usd", None) or 0.0)
    return float(point.extra_model_calls)


def _amount(value: float, by_cost: bool) -> str:
    return f"+${value:.4f}" if by_cost else f"+{round(value, 2):g}"


def _point_anchor(point: PointResult) -> str:
    return _slug("point", point.mode, point.script, point.order)


def _heatmap(mode: str, points: Sequence[PointResult], by_cost: bool, top: float) -> str:
    scripts = list(dict.fromkeys(p.script for p in points))
    names: dict[str, int] = {}
    for p in sorted(points, key=lambda p: p.order):
        names.setdefault(p.crash_point, p.order)
    columns = sorted(names, key=lambda n: names[n])
    cell, left, head = 76, 92, 210
    # Room on the right for the last column's slanted label.
    width = left + cell * len(columns) + 150
    height = head + cell * len(scripts) + 6
    out = [
        f'<svg class="heatmap" data-mode="{_e(mode)}" viewBox="0 0 {width} {height}" width="{width}" '
        f'role="img" aria-label="crash points of the {_e(agent_name(mode))}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for c, name in enumerate(columns):
        cx = left + c * cell + cell / 2
        out.append(
            f'<text transform="translate({cx + 4:.1f},{head - 6}) rotate(-55)" class="tiny">'
            f"{names[name]}. {_e(name[:52])}</text>"
        )
    for r, script in enumerate(scripts):
        ry = head + r * cell
        out.append(f'<text x="{left - 6}" y="{ry + cell / 2 + 4}" text-anchor="end">{_e(script)}</text>')
        for point in (p for p in points if p.script == script):
            c = columns.index(point.crash_point)
            value = _extra(point, by_cost)
            share = value / top if top else 0.0
            fill = _ramp(share)
            ink = "white" if share > 0.55 else "black"
            status = {"completed": "" if point.answer_matches else "other answer"}.get(
                point.status, point.status
            )
            cx = left + c * cell
            out.append(
                f'<a href="#{_point_anchor(point)}"><g class="cell" data-extra="{value:g}" '
                f'data-point="{_e(point.crash_point)}">'
                f'<rect x="{cx + 1}" y="{ry + 1}" width="{cell - 2}" height="{cell - 2}" fill="{fill}" '
                f'stroke="{"#000" if point.pays_twice else "#bbb"}" '
                f'stroke-width="{2 if point.pays_twice else 1}"/>'
                f'<text x="{cx + cell / 2}" y="{ry + cell / 2}" text-anchor="middle" fill="{ink}">'
                f"{_amount(value, by_cost)}</text>"
                f'<text x="{cx + cell / 2}" y="{ry + cell / 2 + 14}" text-anchor="middle" fill="{ink}" '
                f'class="tiny">{_e(status)}</text>'
                f"<title>{_e(mode)}/{_e(script)} #{point.order} {_e(point.crash_point)}: {_e(point.status)}, "
                f"{point.extra_model_calls:+d} model calls, {point.extra_step_runs:+d} step runs, "
                f"{point.mismatches} mismatches</title></g></a>"
            )
    out.append("</svg>")
    return "".join(out)


def _summary(points: Sequence[PointResult], by_cost: bool) -> tuple[str, ...]:
    n = len(points)
    outside = sum(max(0, p.extra_model_calls - p.model_calls_in_flight) for p in points)
    outside_at = sum(1 for p in points if p.extra_model_calls > p.model_calls_in_flight)
    flight = sum(p.model_calls_in_flight for p in points)
    kept = sum(1 for p in points if p.extra_step_runs <= p.steps_in_flight)
    differ = sum(1 for p in points if p.status == "completed" and not p.answer_matches)
    stuck = sum(1 for p in points if p.status in ("paused", "stuck"))
    expected = sum(_extra(p, by_cost) for p in points) / n if n else 0.0
    missed = sum(1 for p in points if not p.confirmed)
    return (
        str(n),
        f"{n - outside_at}/{n}",
        f"{kept}/{n}",
        f"{outside} at {outside_at} points",
        str(flight),
        str(differ),
        str(stuck),
        _amount(expected, by_cost),
        f'<span class="bad">{missed}</span>' if missed else "0",
    )


def sweep_sections(points: Sequence[PointResult]) -> list[Section]:
    """A heatmap per agent mode (crash points in time order against scripts), the summary, each point."""
    by_cost = any(getattr(p, "extra_cost_usd", None) is not None for p in points)
    top = max((_extra(p, by_cost) for p in points), default=0.0)
    measure = "extra cost (US dollars)" if by_cost else "extra model calls (no price in the records)"
    modes = list(dict.fromkeys(p.mode for p in points))
    body = [
        f"<p>{len(points)} crash points. Each cell is one crash point, coloured by its {measure} beyond the "
        "clean run: light is nothing paid again, dark is the most in this report "
        f"({_amount(top, by_cost)}). A thick black border marks a point that paid twice for completed work; "
        "the words under the figure name an end other than the clean answer. Each cell links to that "
        "point's timeline.</p>"
    ]
    twice = [p for p in points if p.pays_twice]
    missed = [p for p in points if not p.confirmed]
    for words, found in (
        ("paid twice for completed work", twice),
        ("kills did not land where the point says", missed),
    ):
        if found:
            links = ", ".join(
                f'<a href="#{_point_anchor(p)}">{_e(p.mode)}/{_e(p.script)} #{p.order}</a>' for p in found
            )
            body.append(f'<p class="bad">{len(found)} of {len(points)} points {words}: {links}</p>')
    for mode in modes:
        body.append(f"<h3>{_e(agent_name(mode))}</h3>")
        body.append(_heatmap(mode, [p for p in points if p.mode == mode], by_cost, top))
    combos = list(dict.fromkeys((p.mode, p.script) for p in points))
    rows = [
        (_e(m), _e(s), *_summary([p for p in points if (p.mode, p.script) == (m, s)], by_cost))
        for m, s in combos
    ]
    body += [
        "<h3>Summary</h3>",
        _table(
            (
                "mode",
                "script",
                "points",
                "journaled answers survived",
                "completed steps not run again",
                "model calls paid again outside the journal",
                "model calls cut off in flight",
                "other answer",
                "paused or stuck",
                "expected extra per crash (uniform over points)",
                "kills that missed",
            ),
            rows,
        ),
    ]
    sections = [Section("sweep", "Sweep: what a crash costs, point by point", "".join(body))]
    details = []
    for point in sorted(points, key=lambda p: (modes.index(p.mode), p.script, p.order)):
        anchor = _point_anchor(point)
        landed = (
            "as the point says" if point.confirmed else '<span class="bad">NOT where the point says</span>'
        )
        details.append(
            f'<section class="point" id="{anchor}"><h3>{_e(point.mode)}/{_e(point.script)} '
            f"#{point.order}: {_e(point.crash_point)}</h3>"
            f"<p><b>{_e(point.status)}</b>{_answer_words(point)}; "
            f"{point.extra_model_calls:+d} model calls ({point.model_calls_in_flight} cut off in flight), "
            f"{point.extra_step_runs:+d} step runs, {point.attempts} attempts, "
            f"{point.mismatches} mismatches; "
            f"journal held {point.journal_at_kill} entries at the kill "
            f"({landed}). "
            f'<code>{_e(point.invocation_id)}</code> <a href="#sweep">back to the heatmap</a></p>'
            + timeline_svg(_timeline_of(point, f"timeline-{anchor}"))
            + "</section>"
        )
    sections.append(Section("points", "Every crash point's timeline", _LEGEND + "".join(details)))
    return sections


def _answer_words(point: PointResult) -> str:
    if point.status != "completed":
        return ""
    return ", same answer" if point.answer_matches else ", other answer"


def soak_section(record: SoakRecord) -> Section:
    """A soak's figures, with its verdict."""
    rows = [
        ("invocations sent", str(record.sent)),
        ("completed", str(record.completed)),
        ("paused", str(record.paused)),
        ("lost (must be 0)", f'<span class="{"ok" if record.lost == 0 else "bad"}">{record.lost}</span>'),
        (
            "unfinished at the deadline (must be 0)",
            f'<span class="{"ok" if record.unfinished == 0 else "bad"}">{record.unfinished}</span>',
        ),
        ("kills", str(record.kills)),
        ("model calls", str(record.model_calls)),
        ("model calls beyond the clean count", str(record.extra_model_calls)),
        ("clean count per invocation (measured)", f"{record.clean_model_calls} model calls"),
        ("bound: answers the journal lacked at the kills", str(record.bound)),
        ("tool runs beyond one per invocation", str(record.extra_tool_runs)),
        ("throughput (completed per second)", f"{record.throughput}"),
        ("wall time (s)", f"{record.wall_time:.1f}"),
        (
            "completion time p50 / p99 (s)",
            f"{record.p50_completion or 0:.2f} / {record.p99_completion or 0:.2f}",
        ),
    ]
    if record.gave_up:
        rows.append(("gave up waiting", _e(record.gave_up)))
    verdict = _verdict(record.ok).replace("matches", "nothing lost, extra calls within the bound")
    return Section("soak", "Soak", f"<p>{verdict}</p>" + _table(("figure", "measured"), rows))


# -- replay-check --------------------------------------------------------------------------------------------

REPLAY_SECTION = "replay-check"
"""The id of the replay-check section."""

_VERDICTS: dict[str, tuple[str, str, str]] = {
    # verdict -> (badge colour, symbol, what it means for a deploy)
    "replays": (GREEN, "✓", "the code replays the journal"),
    "continues": (SKY, "→", "the code replays the journal, then goes on live"),
    "diverges": (VERMILLION, "✗", "a resume on this code meets a journal mismatch (RT0016)"),
    "fails": (PURPLE, "✗", "the handler or the SDK failed during the replay"),
    "undecided": (YELLOW, "?", "the replay could not tell"),
}


def _verdict_words(result: ReplayResult) -> str:
    if result.verdict == "diverges":
        return f"diverges at index {result.index}"
    return result.verdict


def _verdict_badge(result: ReplayResult) -> str:
    colour, symbol, meaning = _VERDICTS.get(result.verdict, (GREY, "?", result.verdict))
    return (
        f'<span class="badge" style="border-color:{colour};box-shadow:inset 5px 0 0 {colour}" '
        f'title="{_e(meaning)}">{symbol} {_e(_verdict_words(result))}</span>'
    )


def _journal_name(result: ReplayResult) -> str:
    return result.path or result.invocation_id


def _replay_anchor(number: int, result: ReplayResult) -> str:
    return _slug("replay", number, _journal_name(result))


def _outside_words(result: ReplayResult) -> str:
    during = result.calls_during_replay
    past = len(result.outside_calls) - during
    words = f"{during} paid again on every replay" if during else "0"
    if past:
        words += f"; {past} past the journal's end"
    return words


def _sequences(result: ReplayResult) -> str:
    """The journal's commands against the code's, side by side by command index, up to where they part."""
    rows = []
    # Of equal length unless the journal ends before the index the SDK names: show the gap, drop nothing.
    pairs = itertools.zip_longest(result.recorded_commands, result.attempted_commands, fillvalue="(none)")
    for index, (recorded, attempted) in enumerate(pairs):
        parts = recorded != attempted or index == result.index
        mark = '<span class="bad">≠ they part here</span>' if parts else "= same"
        rows.append(
            f'<tr class="{"parts" if parts else "same"}"><td>{index}</td>'
            f'<td class="recorded"><code>{_e(recorded)}</code></td>'
            f'<td class="attempted"><code>{_e(attempted)}</code></td><td>{mark}</td></tr>'
        )
    return (
        '<table class="sequences"><thead><tr><th>command index</th><th>recorded (the journal)</th>'
        f"<th>attempted (the code)</th><th></th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _replay_details(number: int, result: ReplayResult) -> str:
    parts = [
        f'<div class="journal-check" id="{_replay_anchor(number, result)}">'
        f"<h3>{_e(_journal_name(result))}: {_verdict_badge(result)}</h3>"
        f"<p>{_e(result.service)}/{_e(result.handler)}, invocation <code>{_e(result.invocation_id)}</code>, "
        f"{result.entries} entries; seed: {_e(result.seed)}.</p>"
    ]
    if result.verdict == "diverges":
        agree = (
            '<span class="ok">they agree</span> with the journal'
            if result.labels_agree
            else '<span class="bad">they DISAGREE</span> with the journal (the SDK swapped them): trust the '
            "index and this table"
        )
        parts.append(
            '<div class="divergence"><h4>Where the code parts from the journal</h4>'
            + _sequences(result)
            + f"<p>The SDK's message labels: {agree}.</p></div>"
        )
    if result.next_command:
        parts.append(f"<p>Next, live: <code>{_e(result.next_command)}</code></p>")
    if result.message and result.verdict != "continues":
        parts.append(f"<pre>{_e(result.message.strip())}</pre>")
    if result.outside_calls:
        rows = [
            (
                str(c.number),
                str(c.turn),
                str(c.ask),
                "during the replay: paid again on every replay"
                if c.during_replay
                else "past the journal's end",
                f"<code>{_e(c.answer)}</code>",
            )
            for c in result.outside_calls
        ]
        parts.append(
            "<h4>Model calls outside the journal (answered by the stub)</h4>"
            + _table(("call", "turn", "ask", "when", "the stub answered"), rows)
        )
    parts.append(f"<p>Past the journal's end: {_e(result.past_end)}.</p></div>")
    return "".join(parts)


def replay_check_section(results: Sequence[ReplayResult]) -> Section:
    """One row per journal with its verdict and its calls outside the journal; then each journal that does
    not simply replay, a divergence as the recorded and attempted commands side by side."""
    bad = [r for r in results if not r.ok]
    found = [r.verdict for r in results]
    counts = ", ".join(f"{found.count(v)} {v}" for v in dict.fromkeys(found))
    if bad:
        diverging = sum(1 for r in bad if r.verdict == "diverges")
        why = (
            f" {diverging} diverge: resuming those invocations on it meets a journal mismatch (RT0016)."
            if diverging
            else ""
        )
        if len(bad) > diverging:
            why += f" {len(bad) - diverging} could not be replayed to a verdict (fails or undecided)."
        head = (
            f'<p class="bad"><b>✗ {len(bad)} of {len(results)} journals do not replay on this code</b> '
            f"({_e(counts)}).{why}</p>"
        )
    else:
        head = f'<p class="ok"><b>✓ All {len(results)} journals replay on this code</b> ({_e(counts)}).</p>'
    rows = []
    for number, result in enumerate(results, start=1):
        anchor = _replay_anchor(number, result)
        plain = result.verdict == "replays" and not result.outside_calls
        name = _e(_journal_name(result)) if plain else f'<a href="#{anchor}">{_e(_journal_name(result))}</a>'
        if result.verdict == "diverges":
            what = (
                f"<code>{_e(result.recorded)}</code> recorded, <code>{_e(result.attempted)}</code> attempted"
            )
        elif result.verdict == "continues":
            what = f"next, live: <code>{_e(result.next_command)}</code>"
        elif result.verdict in ("fails", "undecided"):
            what = _e(result.message.splitlines()[0] if result.message else "")
        else:
            what = ""
        rows.append(
            f'<tr data-verdict="{_e(result.verdict)}"><td>{name}</td><td>{_e(result.service)}/'
            f"{_e(result.handler)}</td><td>{result.entries}</td><td>{_verdict_badge(result)}</td>"
            f"<td>{_e(_outside_words(result))}</td><td>{what}</td></tr>"
        )
    legend = "".join(
        f'<span class="badge" style="border-color:{c};box-shadow:inset 5px 0 0 {c}">{sym} {_e(v)}</span> '
        f"{_e(meaning)}. "
        for v, (c, sym, meaning) in _VERDICTS.items()
    )
    table = (
        '<table class="replay-check"><thead><tr><th>journal</th><th>service/handler</th><th>entries</th>'
        "<th>verdict</th><th>model calls outside the journal</th><th>what</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    details = "".join(
        _replay_details(n, r)
        for n, r in enumerate(results, start=1)
        if not (r.verdict == "replays" and not r.outside_calls)
    )
    return Section(REPLAY_SECTION, "Replay check", head + table + f'<p class="legend">{legend}</p>' + details)


# -- the page --------------------------------------------------------------------------------------------

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111;margin:0 auto;
max-width:1180px;padding:0 18px 40px}
h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;border-bottom:2px solid #333;padding-top:14px}
h3{font-size:15px;margin:18px 0 6px}h4{font-size:13px;margin:14px 0 4px}
table{border-collapse:collapse;margin:4px 0 10px;font-size:12.5px}
th,td{border:1px solid #ccc;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f2f2f2}
code,pre{font:12px/1.35 ui-monospace,Menlo,Consolas,monospace}
pre{background:#f7f7f7;border:1px solid #ddd;padding:6px;white-space:pre-wrap}
.ok{color:#006b4f}.bad{color:#b34700;font-weight:600}
.key{display:inline-block;min-width:14px;padding:0 3px;border:1px solid #333;color:#000;font-size:11px;
text-align:center;margin-left:6px}
.hatched{background:repeating-linear-gradient(45deg,#eee 0 3px,#888 3px 5px)}
svg text{font-size:11px;font-family:inherit}svg .tiny{font-size:9.5px}
svg .letter{font-size:10px;font-weight:600}
svg .lane{font-size:11.5px;fill:#333}svg .mark{fill:#b34700;font-size:10.5px}
.timeline{border:1px solid #ddd;margin:6px 0;background:#fff}
.legend{font-size:12px;color:#333}
.cols{display:flex;gap:24px;flex-wrap:wrap}
.mismatch,.divergence{border-left:4px solid #D55E00;padding-left:10px}
.badge{display:inline-block;border:2px solid #999;padding:0 6px 0 10px;border-radius:3px;white-space:nowrap;
background:#fff;color:#000}
.sequences tr.parts td{background:#fbe3d3;font-weight:600}
nav ol{columns:2}
.point{border-top:1px solid #ddd}
@media print{nav{display:none}a{color:inherit;text-decoration:none}section{break-inside:auto}
.timeline,.heatmap,.plot,table{break-inside:avoid}body{max-width:none}}
"""


_SHARED_DEFS = (
    '<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>'
    '<pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
    '<rect width="6" height="6" fill="#eee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#888" '
    'stroke-width="2"/></pattern></defs></svg>'
)
"""The timelines' hatching, defined once for the page."""


def _how_measured(sections: Sequence[Section]) -> str:
    lab = (
        "Every figure was measured on a real restate-server with real agent processes; only the model is a "
        "stub."
    )
    offline = (
        "Each journal was captured from a real restate-server and replayed offline, without a server, "
        "against the code's real restate-sdk endpoint; model calls outside the journal were answered by the "
        "stub model."
    )
    replayed = [s.id == REPLAY_SECTION for s in sections]
    if all(replayed) and sections:
        return offline
    return f"{lab} {offline}" if any(replayed) else lab


def html_page(title: str, sections: Sequence[Section], *, sources: Sequence[str] = ()) -> str:
    """The whole page: a heading, the contents, every section."""
    made = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    origin = f" from {', '.join(_e(s) for s in sources)}" if sources else ""
    contents = "".join(f'<li><a href="#{s.id}">{_e(s.title)}</a></li>' for s in sections)
    body = "".join(f'<section id="{s.id}"><h2>{_e(s.title)}</h2>{s.body}</section>' for s in sections)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>"
        f"<h1>{_e(title)}</h1><p>Made by paidtwice at {_e(made)}{origin}. {_how_measured(sections)}</p>"
        f"{_SHARED_DEFS}<nav><ol>{contents}</ol></nav>{body}</body></html>\n"
    )


def write_html(path: Path, title: str, sections: Sequence[Section], *, sources: Sequence[str] = ()) -> Path:
    """Write the page atomically (a reader never sees half of it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(html_page(title, sections, sources=sources))
    tmp.replace(path)
    return path
