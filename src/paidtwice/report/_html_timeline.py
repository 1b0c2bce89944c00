"""A run's timeline as inline SVG: attempts, the kill and the down time, model calls, tool calls and journal
entries, each on its own lane of one time axis; and the legend that says what each mark means."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from paidtwice._words import count
from paidtwice.engine import JournalEntry
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
from paidtwice.results import AttemptLine, ModelLogLine, PointResult, RunRecord, ToolLogLine

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
    first: float = 0.0
    """Seconds from the start to the first thing drawn (a sweep point's invocation starts seconds after the
    point does, while its agent starts and registers)."""


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
    starts = [
        *(a.at for a in record.attempt_log if a.at is not None),
        *(c.at for c in record.model_log),
        *(t.at for t in record.tool_log),
        *journal_times,
    ]
    if record.killed_at is not None:
        starts.append(record.killed_at)
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
        first=max(0.0, min(starts, default=0.0)),
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


def _step(span: float) -> float:
    """A round tick step that puts about six ticks on `span` seconds."""
    raw = span / 6 or 1.0
    power = 10 ** math.floor(math.log10(raw))
    return float(next(m * power for m in (1, 2, 5, 10) if m * power >= raw))


def _ticks(start: float, end: float) -> list[float]:
    step = _step(end - start)
    first = math.ceil(start / step - 1e-9)
    return [round(i * step, 6) for i in range(first, int(end / step + 1e-9) + 1)]


def _axis_start(first: float, end: float) -> float:
    """Where the axis begins: at 0, unless nothing happens in the first third of the run and for more than
    a second (a sweep point whose agent took seconds to start): then at the round tick before the first
    thing drawn."""
    if first <= max(1.0, end / 3):
        return 0.0
    step = _step(end - first)
    return math.floor(first / step) * step


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

    start: float
    """Seconds from the run's start where the axis begins."""
    end: float
    """Seconds from the run's start where it ends."""

    def __call__(self, t: float) -> float:
        return _LEFT + (_WIDTH - _LEFT - _RIGHT) * (max(self.start, t) - self.start) / (self.end - self.start)


def timeline_svg(tl: Timeline) -> str:
    """Attempts, the kill and the down time, model calls, tool calls and journal entries on one time axis."""
    start = _axis_start(tl.first, tl.end)
    x = _Scale(start, start + (tl.end - start) * 1.04 + 0.05)
    return "".join(
        [
            _opening(tl),
            *_lanes_and_ticks(x),
            # The kill and the down time, behind everything else.
            *_kill_and_down_time(tl, x),
            *_attempt_marks(tl, x),
            *_model_call_marks(tl, x),
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
        for t in _ticks(x.start, x.end)
    ]
    skipped = f" (the first {x.start:g} s, before anything happened, left out)" if x.start else ""
    out.append(
        f'<text x="{_WIDTH - _RIGHT}" y="{_AXIS_Y + 30}" text-anchor="end">'
        f"seconds from the run's start{skipped}</text>"
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


def _label_groups(spans: list[tuple[float, float]], words: Callable[[list[int]], str]) -> list[list[int]]:
    """Marks (x from, x to, in drawing order) grouped so that their labels do not overlap: a label sits
    after the last mark of its group, and a mark that starts before that label would end joins the group,
    which then has one label, `words(group)`."""
    groups: list[list[int]] = []
    label_end = -math.inf
    for i, (x0, _) in enumerate(spans):
        if groups and x0 < label_end:
            groups[-1].append(i)
        else:
            groups.append([i])
        group = groups[-1]
        label_end = max(spans[j][1] for j in group) + 2 + _text_width(words(group))
    return groups


def _text_width(text: str) -> float:
    """Room a label in the timeline's small type takes (a generous average glyph width)."""
    return 5.6 * len(text) + 2


def _numbers(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}\u2013{last}"


def _index_words(indexes: list[int]) -> str:
    """Numbers of one label: "4", "2\u20135", or "3,6" when they do not follow one another."""
    indexes = sorted(indexes)
    if indexes[-1] - indexes[0] + 1 == len(indexes):
        return _numbers(indexes[0], indexes[-1])
    return ",".join(map(str, indexes))


def _model_call_marks(tl: Timeline, x: _Scale) -> list[str]:
    """Each model call as a bar, numbered; calls too close together for a number each share one."""
    spans = []
    for call in tl.model_calls:
        stop = call.finished if call.finished is not None else tl.end
        spans.append((x(call.at), x(call.at) + max(6.0, x(stop) - x(call.at))))

    def words(group: list[int]) -> str:
        calls = [tl.model_calls[i] for i in group]
        cut = [c.call for c in calls if c.delivered is not True]
        numbers = _index_words([c.call for c in calls])
        if not cut:
            return numbers
        return f"{numbers} cut off" if len(cut) == len(calls) else f"{numbers} ({_index_words(cut)} cut off)"

    labels = {
        group[-1]: f'<text x="{max(spans[i][1] for i in group) + 2:.1f}" '
        f'y="{_y("model calls") + _LANE_H / 2 + 3}" class="tiny">{esc(words(group))}</text>'
        for group in _label_groups(spans, words)
    }
    return [_model_call_mark(call, tl.end, x, labels.get(i, "")) for i, call in enumerate(tl.model_calls)]


def _model_call_mark(call: ModelLogLine, end: float, x: _Scale, label: str) -> str:
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
        f"{label}</g>"
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
    """A tick per journal entry when it was appended, numbered by index; entries appended too close
    together for a number each share one ("2-5")."""
    jy = _y("journal")
    placed = [(e, at) for e in tl.journal if (at := journal_at(tl.started_at, e)) is not None]
    placed.sort(key=lambda item: item[1])

    def words(group: list[int]) -> str:
        return _index_words([placed[i][0].index for i in group])

    labels = {
        group[-1]: f'<text x="{x(placed[group[-1]][1]) + 2:.1f}" y="{jy + 13}" class="tiny">'
        f"{words(group)}</text>"
        for group in _label_groups([(x(at), x(at)) for _, at in placed], words)
    }
    return [
        f'<g class="journal-entry"><line x1="{x(at):.1f}" x2="{x(at):.1f}" y1="{jy + 4}" '
        f'y2="{jy + _LANE_H - 4}" stroke="{GREEN if entry.is_command else "#333"}" stroke-width="2"/>'
        f"<title>journal entry {entry.index}: {esc(entry.label())}, appended at {at:.2f} s</title>"
        f"{labels.get(i, '')}</g>"
        for i, (entry, at) in enumerate(placed)
    ]


LEGEND = (
    '<p class="legend">Attempts: '
    + " ".join(
        f'<span class="key" style="background:{fill}">{letter}</span> {words}'
        for fill, letter, words in OUTCOMES.values()
        if letter != "E"
    )
    + f'. Model calls: <span class="key" style="background:{BLUE}">&nbsp;</span> answer delivered, '
    '<span class="key hatched">&nbsp;</span> cut off (the answer never reached the agent). '
    f'<span class="key" style="background:{YELLOW}">◆</span> tool call. Journal: a tick per entry '
    "(green: a command the code issued; dark: a notification, such as a step's result or a timer that "
    "fired), numbered by index, when the server appended it. The hatched band is the down time, from the "
    "kill (red line) until the agent listened again; an attempt refused while it was down has no time on "
    "record and is drawn inside the down time, in order.</p>"
)
"""What every mark on a timeline means, in words beside its colour."""
