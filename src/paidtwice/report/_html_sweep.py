"""The sweep's part of the HTML report: a heatmap of crash points per agent mode, the summary per mode and
script, and each point's timeline."""

from __future__ import annotations

from collections.abc import Sequence

from paidtwice._words import agent_name, count
from paidtwice.report._coverage import coverage_lines, reached
from paidtwice.report._html_parts import (
    Section,
    esc,
    html_table,
    slug,
)
from paidtwice.report._html_timeline import LEGEND, timeline_of, timeline_svg
from paidtwice.report._text import usd
from paidtwice.results import PointResult

__all__ = ["sweep_sections"]


def _ramp(share: float) -> str:
    """A sequential, colour-blind-safe ramp (light yellow to dark blue, as ColorBrewer's YlGnBu)."""
    stops = [(255, 255, 217), (199, 233, 180), (65, 182, 196), (34, 94, 168), (8, 29, 88)]
    share = min(1.0, max(0.0, share)) * (len(stops) - 1)
    i = min(int(share), len(stops) - 2)
    f = share - i
    r, g, b = (round(a + (c - a) * f) for a, c in zip(stops[i], stops[i + 1], strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def _extra(point: PointResult, by_cost: bool) -> float:
    return point.extra_cost_usd if by_cost else float(point.extra_model_calls)


def _amount(value: float, by_cost: bool) -> str:
    """An extra amount with its sign, dollars to the digits the text report prints (a fraction of a cent is
    never shown as $0.0000)."""
    sign = "-" if value < 0 else "+"
    return f"{sign}{usd(abs(value))}" if by_cost else f"{sign}{round(abs(value), 2):g}"


def _point_anchor(point: PointResult) -> str:
    return slug("point", point.mode, point.script, point.order)


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
        f'<svg class="heatmap" data-mode="{esc(mode)}" viewBox="0 0 {width} {height}" width="{width}" '
        f'role="img" aria-label="crash points of the {esc(agent_name(mode))}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for c, name in enumerate(columns):
        cx = left + c * cell + cell / 2
        out.append(
            f'<text transform="translate({cx + 4:.1f},{head - 6}) rotate(-55)" class="tiny">'
            f"{names[name]}. {esc(name[:52])}</text>"
        )
    for r, script in enumerate(scripts):
        ry = head + r * cell
        out.append(f'<text x="{left - 6}" y="{ry + cell / 2 + 4}" text-anchor="end">{esc(script)}</text>')
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
                f'data-point="{esc(point.crash_point)}">'
                f'<rect x="{cx + 1}" y="{ry + 1}" width="{cell - 2}" height="{cell - 2}" fill="{fill}" '
                f'stroke="{"#000" if point.pays_twice else "#bbb"}" '
                f'stroke-width="{2 if point.pays_twice else 1}"/>'
                f'<text x="{cx + cell / 2}" y="{ry + cell / 2}" text-anchor="middle" fill="{ink}">'
                f"{_amount(value, by_cost)}</text>"
                f'<text x="{cx + cell / 2}" y="{ry + cell / 2 + 14}" text-anchor="middle" fill="{ink}" '
                f'class="tiny">{esc(status)}</text>'
                + (
                    ""
                    if point.confirmed
                    else f'<text x="{cx + cell / 2}" y="{ry + cell / 2 + 26}" text-anchor="middle" '
                    f'fill="{ink}" class="tiny missed">kill missed</text>'
                )
                + f"<title>{esc(mode)}/{esc(script)} #{point.order} {esc(point.crash_point)}: "
                f"{esc(point.status)}, "
                f"{count(point.extra_model_calls, 'model call', sign=True)}, "
                f"{count(point.extra_step_runs, 'step run', sign=True)}, "
                f"{count(point.mismatches, 'mismatch', 'mismatches')}</title></g></a>"
            )
    out.append("</svg>")
    return "".join(out)


def _summary(points: Sequence[PointResult], by_cost: bool) -> tuple[str, ...]:
    """The figures of the text report's summary of one mode and script (SweepMatrix.summary), counted the
    same way, so that the page and the terminal agree."""
    n = len(points)
    outside = sum(p.answers_asked_again for p in points)
    outside_at = sum(1 for p in points if p.answers_asked_again)
    answered = [p for p in points if p.model_answers_at_kill]
    kept = sum(1 for p in answered if not p.answers_asked_again)
    flight = sum(p.model_calls_in_flight for p in points)
    steps_kept = sum(1 for p in points if not p.step_runs_paid_again)
    differ = sum(1 for p in points if p.status == "completed" and not p.answer_matches)
    stuck = sum(1 for p in points if p.status in ("paused", "stuck"))
    # A crash at a uniformly random moment of the clean run: each point weighted by the share it covers.
    expected = sum(p.covers * _extra(p, by_cost) for p in points)
    missed = sum(1 for p in points if not p.confirmed)
    retried = sum(1 for p in points if p.confirmed and p.retries)
    return (
        str(n),
        f"{kept}/{len(answered)}" if answered else "no answer had come back at any point",
        f"{steps_kept}/{n}",
        f"{outside} at {count(outside_at, 'point')}",
        str(flight),
        str(differ),
        str(stuck),
        _amount(expected, by_cost),
        str(retried),
        f'<span class="bad">{missed}</span>' if missed else "0",
    )


def sweep_sections(points: Sequence[PointResult]) -> list[Section]:
    """A heatmap per agent mode (crash points in time order against scripts), the summary, each point."""
    by_cost = any(p.price_model for p in points)
    top = max((_extra(p, by_cost) for p in points), default=0.0)
    measure = "extra cost (US dollars)" if by_cost else "extra model calls (no price in the records)"
    modes = list(dict.fromkeys(p.mode for p in points))
    body = [
        f"<p>{len(points)} crash points. Each cell is one crash point, coloured by its {measure} beyond the "
        "clean run: light is nothing paid again, dark is the most in this report "
        f"({_amount(top, by_cost)}). A thick black border marks a point that paid twice for completed work; "
        "the words under the figure name an end other than the clean answer, and a kill that missed its "
        "moment. Each cell links to that "
        "point's timeline.</p>"
    ]
    body += _coverage_html(points)
    twice = [p for p in points if p.pays_twice]
    missed = [p for p in points if not p.confirmed]
    for words, found in (
        ("{n} of {all} points paid twice for completed work", twice),
        ("{n} of {all} points could not be placed (the kill did not land where the point says)", missed),
    ):
        if found:
            links = ", ".join(
                f'<a href="#{_point_anchor(p)}">{esc(p.mode)}/{esc(p.script)} #{p.order}</a>' for p in found
            )
            body.append(f'<p class="bad">{words.format(n=len(found), all=len(points))}: {links}</p>')
    for mode in modes:
        body.append(f"<h3>{esc(agent_name(mode))}</h3>")
        body.append(_heatmap(mode, [p for p in points if p.mode == mode], by_cost, top))
    combos = list(dict.fromkeys((p.mode, p.script) for p in points))
    rows = [
        (esc(m), esc(s), *_summary([p for p in points if (p.mode, p.script) == (m, s)], by_cost))
        for m, s in combos
    ]
    body += [
        "<h3>Summary</h3>",
        html_table(
            (
                "mode",
                "script",
                "points",
                "answers kept by the journal (of points with one back at the kill)",
                "completed steps not run again",
                "answers asked for again",
                "model calls cut off in flight",
                "other answer",
                "paused or stuck",
                "expected extra of one crash at a random moment",
                "kills placed after a retry",
                "kills that missed (undecided)",
            ),
            rows,
        ),
    ]
    sections = [Section("sweep", "Sweep: what a crash costs, point by point", "".join(body))]
    # In the heatmaps' order: mode, then script as its rows, then crash point.
    scripts = list(dict.fromkeys(p.script for p in points))
    ordered = sorted(points, key=lambda p: (modes.index(p.mode), scripts.index(p.script), p.order))
    details = "".join(_point_details(point) for point in ordered)
    sections.append(Section("points", "Every crash point's timeline", LEGEND + details))
    return sections


def _point_details(point: PointResult) -> str:
    """One crash point: what it cost and how it ended, and its timeline."""
    anchor = _point_anchor(point)
    tries = f" after {count(point.retries, 'retry', 'retries')}" if point.retries else ""
    landed = f"as the point says{tries}"
    if not point.confirmed:
        why = f": could not place{tries}, because {esc(point.not_placed)}" if point.not_placed else ""
        landed = f'<span class="bad">NOT where the point says{why}</span>'
    return (
        f'<section class="point" id="{anchor}"><h3>{esc(point.mode)}/{esc(point.script)} '
        f"#{point.order}: {esc(point.crash_point)}</h3>"
        f"<p><b>{esc(point.status)}</b>{_answer_words(point)}; "
        f"{count(point.extra_model_calls, 'model call', sign=True)} beyond the clean run "
        f"({point.model_calls_in_flight} cut off in flight), "
        f"{count(point.extra_step_runs, 'step run', sign=True)}, {count(point.attempts, 'attempt')}, "
        f"{count(point.mismatches, 'mismatch', 'mismatches')}; "
        f"extra cost {_amount(point.extra_cost_usd, True)}; "
        f"journal held {count(point.journal_at_kill, 'entry', 'entries')} at the kill "
        f"({landed}). "
        f'<code>{esc(point.invocation_id)}</code> <a href="#sweep">back to the heatmap</a></p>'
        + timeline_svg(timeline_of(point, f"timeline-{anchor}"))
        + "</section>"
    )


def _answer_words(point: PointResult) -> str:
    if point.status != "completed":
        return ""
    return ", same answer" if point.answer_matches else ", other answer"


def _coverage_html(points: Sequence[PointResult]) -> list[str]:
    """A paragraph per swept handler: what it reached and what not."""
    out = []
    for name, coverage in reached(points).items():
        lines = coverage_lines(coverage)
        out.append(
            f"<p><b>{esc(name)}</b> {esc(lines[0])}"
            + "".join(f'<br><span class="bad">{esc(line)}</span>' for line in lines[1:])
            + "</p>"
        )
    return out
