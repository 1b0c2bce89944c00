"""A run's timeline as inline SVG: attempts, the kill and the down time, model calls, tool calls and journal
entries, each on its own lane of one time axis; and the legend that says what each mark means."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from paidtwice._words import count
from paidtwice.engine._sql import JournalEntry
from paidtwice.lab._records import AttemptLine, ModelLogLine, RunRecord, ToolLogLine
from paidtwice.lab._sweep import PointResult
from paidtwice.report._html_parts import (
    BLUE,
    GREEN,
    OUTCOMES,
    PURPLE,
    VERMILLION,
    YELLOW,
    bill_words,
    esc,
)

__all__ = ["LEGEND", "Timeline", "journal_at", "timeline_of", "timeline_svg"]


@dataclass(frozen=True)
class Timeline:
    """What a timeline draws, from a run's record or a sweep point's."""

    id: str
    """The SVG element's id, the anchor links point at."""
    killed: str
    """What the kill stopped: "agent" or "restate-server"."""
    started_at: float | None
    """The run's start (epoch seconds): journal entries are placed relative to it."""
    killed_at: float | None
    """Seconds from the start to the kill; None for a run without one."""
    down_time: float | None
    """Seconds from the kill until what was killed listened again."""
    attempts: tuple[AttemptLine, ...]
    """The invocation's attempts."""
    model_calls: tuple[ModelLogLine, ...]
    """The stub's model calls for the invocation."""
    tools: tuple[ToolLogLine, ...]
    """The stub's tool calls for the invocation."""
    journal: tuple[JournalEntry, ...]
    """The final journal, by index."""
    end: float
    """Seconds from the start to the last thing drawn."""


def timeline_of(record: RunRecord | PointResult, anchor: str) -> Timeline:
    """The timeline of a run's record or a sweep point's, with the SVG id `anchor`."""
    journal_times = [t for t in (journal_at(record.started_at, e) for e in record.journal) if t is not None]
    times = [
        *(a.ended or a.at or 0.0 for a in record.attempt_log),
        *(c.finished or c.at for c in record.model_log),
        *journal_times,
    ]
    if record.killed_at is not None:
        times.append(record.killed_at + (record.down_time or 0.0))
    return Timeline(
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


def journal_at(started_at: float | None, entry: JournalEntry) -> float | None:
    """Seconds from the run's start to when the server appended the entry; None when either is unknown."""
    if started_at is None or not entry.appended_at:
        return None
    at = _epoch(entry.appended_at)
    return None if at is None else at - started_at


def _epoch(stamp: str) -> float | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _ticks(end: float) -> list[float]:
    raw = end / 6 or 1.0
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [i * step for i in range(int(end / step) + 1)]


_LANES = ("attempts", "agent", "model calls", "tool calls", "journal")
_WIDTH, _LEFT, _RIGHT, _LANE_H, _TOP = 960, 92, 16, 30, 8
_AXIS_Y = _TOP + _LANE_H * len(_LANES)
_HEIGHT = _AXIS_Y + 34


def _y(lane: str) -> int:
    """The top of a lane."""
    return _TOP + _LANE_H * _LANES.index(lane)


@dataclass(frozen=True)
class _Scale:
    """Seconds from the run's start to x on the drawing."""

    end: float
    """The seconds the axis spans."""

    def __call__(self, t: float) -> float:
        return _LEFT + (_WIDTH - _LEFT - _RIGHT) * max(0.0, t) / self.end


def timeline_svg(tl: Timeline) -> str:
    """Attempts, the kill and the down time, model calls, tool calls and journal entries on one time axis."""
    x = _Scale(tl.end * 1.04 + 0.05)
    return "".join(
        [
            _opening(tl),
            *_lanes_and_ticks(x),
            # The kill and the down time, behind everything else.
            *_kill_and_down_time(tl, x),
            *_attempt_marks(tl, x),
            *(_model_call_mark(call, tl.end, x) for call in tl.model_calls),
            *(_tool_mark(tool, x) for tool in tl.tools),
            *_journal_marks(tl, x),
            "</svg>",
        ]
    )


def _opening(tl: Timeline) -> str:
    return (
        f'<svg class="timeline" id="{tl.id}" data-attempts="{len(tl.attempts)}" '
        f'data-model-calls="{len(tl.model_calls)}" viewBox="0 0 {_WIDTH} {_HEIGHT}" width="100%" '
        f'role="img" aria-label="timeline: {count(len(tl.attempts), "attempt")}, '
        f"{count(len(tl.model_calls), 'model call')}, "
        f'{count(len(tl.journal), "journal entry", "journal entries")}" '
        'xmlns="http://www.w3.org/2000/svg">'
    )


def _lanes_and_ticks(x: _Scale) -> list[str]:
    out = [
        f'<text class="lane" x="{_LEFT - 6}" y="{_y(lane) + _LANE_H / 2 + 4}" '
        f'text-anchor="end">{lane}</text>'
        f'<line x1="{_LEFT}" x2="{_WIDTH - _RIGHT}" y1="{_y(lane) + _LANE_H}" y2="{_y(lane) + _LANE_H}" '
        'stroke="#ddd"/>'
        for lane in _LANES
    ]
    out += [
        f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{_TOP}" y2="{_AXIS_Y + 4}" stroke="#eee"/>'
        f'<text x="{x(t):.1f}" y="{_AXIS_Y + 16}" text-anchor="middle">{t:g}</text>'
        for t in _ticks(x.end)
    ]
    out.append(
        f'<text x="{_WIDTH - _RIGHT}" y="{_AXIS_Y + 30}" text-anchor="end">'
        "seconds from the run's start</text>"
    )
    return out


def _kill_and_down_time(tl: Timeline, x: _Scale) -> list[str]:
    if tl.killed_at is None:
        return []
    kill = tl.killed_at
    up = kill + (tl.down_time or 0.0)
    return [
        f'<rect class="down" x="{x(kill):.1f}" y="{_TOP}" width="{max(1.0, x(up) - x(kill)):.1f}" '
        f'height="{_LANE_H * len(_LANES)}" fill="url(#hatch)" opacity="0.45">'
        f"<title>{tl.killed} down {up - kill:.2f} s (from the kill at {kill:.2f} s until it listened "
        "again)"
        "</title></rect>"
        f'<line class="kill" x1="{x(kill):.1f}" x2="{x(kill):.1f}" y1="{_TOP}" y2="{_AXIS_Y}" '
        f'stroke="{VERMILLION}" stroke-width="2"/>'
        f'<text x="{x(kill) + 3:.1f}" y="{_y("agent") + 19}" class="mark">{tl.killed} killed at '
        f"{kill:.2f} s; down {up - kill:.2f} s</text>"
    ]


def _down_slots(tl: Timeline) -> dict[int, float]:
    """Attempts that found the agent down have no time on record: they are drawn spread over the down time."""
    down = [a for a in tl.attempts if a.at is None]
    lo = tl.killed_at if tl.killed_at is not None else 0.0
    span = tl.down_time or 0.0
    return {attempt.number: lo + span * i / (len(down) + 1) for i, attempt in enumerate(down, start=1)}


def _attempt_marks(tl: Timeline, x: _Scale) -> list[str]:
    down_slots = _down_slots(tl)
    out = []
    for attempt in tl.attempts:
        if attempt.at is None:
            x0, w = x(down_slots[attempt.number]) - 5, 10.0
            when = "time not recorded (it found the agent down, during the down time)"
        else:
            stop = attempt.ended
            if stop is None:
                stop = tl.killed_at if attempt.outcome == "cut off" and tl.killed_at else attempt.at
            x0, w = x(attempt.at), max(6.0, x(stop) - x(attempt.at))
            when = f"{attempt.at:.2f} s" + (f" to {stop:.2f} s" if stop > attempt.at else "")
        out.append(_attempt_mark(attempt, x0, w, when))
    return out


def _attempt_mark(attempt: AttemptLine, x0: float, w: float, when: str) -> str:
    fill, letter, words = OUTCOMES.get(attempt.outcome, (PURPLE, "E", attempt.outcome))
    return (
        f'<g class="attempt" data-outcome="{esc(attempt.outcome)}">'
        f'<rect x="{x0:.1f}" y="{_y("attempts") + 5}" '
        f'width="{w:.1f}" height="{_LANE_H - 10}" fill="{fill}" stroke="#333" stroke-width="0.5"/>'
        f"<title>attempt {attempt.number}: {esc(words)}; {when}</title>"
        + (
            f'<text x="{x0 + w / 2:.1f}" y="{_y("attempts") + 19}" text-anchor="middle" '
            f'class="letter">{letter}</text>'
            if w >= 9
            else ""
        )
        + "</g>"
    )


def _model_call_mark(call: ModelLogLine, end: float, x: _Scale) -> str:
    """A model call from its start to its answer; one never answered runs to the timeline's end."""
    stop = call.finished if call.finished is not None else end
    cut = call.delivered is not True
    state = "delivered" if call.delivered else ("cut off" if call.delivered is False else "in flight")
    x0, w = x(call.at), max(6.0, x(stop) - x(call.at))
    bill = bill_words(call)
    return (
        f'<g class="model-call" data-delivered="{esc(state)}">'
        f'<rect x="{x0:.1f}" y="{_y("model calls") + 5}" width="{w:.1f}" height="{_LANE_H - 10}" '
        f'fill="{"url(#hatch)" if cut else BLUE}" stroke="{VERMILLION if cut else BLUE}" '
        'stroke-width="1.5"/>'
        f"<title>model call {call.call} (turn {call.turn}, ask {call.ask}): {state}; {call.at:.2f} s to "
        f"{stop:.2f} s; {esc(call.answer)}{'; ' + esc(bill) if bill else ''}</title>"
        f'<text x="{x0 + w + 2:.1f}" y="{_y("model calls") + _LANE_H / 2 + 3}" '
        f'class="tiny">{call.call}{" cut off" if cut else ""}</text></g>'
    )


def _tool_mark(tool: ToolLogLine, x: _Scale) -> str:
    cx = x(tool.at)
    ty = _y("tool calls") + _LANE_H / 2
    return (
        f'<g class="tool-call"><path d="M{cx:.1f},{ty - 7} l7,7 l-7,7 l-7,-7 z" fill="{YELLOW}" '
        f'stroke="#333"/><title>tool {esc(tool.tool)} call {tool.call} at {tool.at:.2f} s'
        f"{'' if tool.delivered else ' (result never delivered)'}</title></g>"
    )


def _journal_marks(tl: Timeline, x: _Scale) -> list[str]:
    out = []
    jy = _y("journal")
    for entry in tl.journal:
        at = journal_at(tl.started_at, entry)
        if at is None:
            continue
        out.append(
            f'<g class="journal-entry"><line x1="{x(at):.1f}" x2="{x(at):.1f}" y1="{jy + 4}" '
            f'y2="{jy + _LANE_H - 4}" stroke="{GREEN if entry.is_command else "#333"}" stroke-width="2"/>'
            f"<title>journal entry {entry.index}: {esc(entry.label())}, appended at {at:.2f} s</title>"
            f'<text x="{x(at) + 2:.1f}" y="{jy + 11 + 9 * (entry.index % 2)}" '
            f'class="tiny">{entry.index}</text>'
            "</g>"
        )
    return out


LEGEND = (
    '<p class="legend">Attempts: '
    + " ".join(
        f'<span class="key" style="background:{fill}">{letter}</span> {words}'
        for fill, letter, words in OUTCOMES.values()
        if letter != "E"
    )
    + f'. Model calls: <span class="key" style="background:{BLUE}">&nbsp;</span> answer delivered, '
    '<span class="key hatched">&nbsp;</span> cut off (the answer never reached the agent). '
    f'<span class="key" style="background:{YELLOW}">◆</span> tool call. Journal: a tick per entry, '
    "numbered by index, when the server appended it. The hatched band is the down time, from the kill "
    "(red line) until the agent listened again; an attempt refused while it was down has no time on record "
    "and is drawn inside the down time, in order.</p>"
)
"""What every mark on a timeline means, in words beside its colour."""
