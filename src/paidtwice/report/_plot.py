"""A small SVG plot of a restart-delay or retry-policy curve (no plotting library needed)."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path

from paidtwice.results import CurvePoint, CurveRecord

__all__ = ["curve_svg", "curve_svg_markup"]

# Okabe & Ito's blue and vermillion; measured and predicted also differ in shape, and the legend says which.
MEASURED, PREDICTED = "#0072B2", "#D55E00"
KILLED = "#56B4E9"
"""Okabe & Ito's sky blue: a retry-policy curve's `kill` line, dashed and drawn over the `pause` line, so it
shows where the two paid the same."""


def _x(point: CurvePoint) -> float:
    """Where a point sits on the x axis: its retry policy's max_attempts, else its measured down time."""
    return float(point.max_attempts) if point.max_attempts is not None else point.down_time


@dataclass(frozen=True)
class _Frame:
    """The plot's size and scales: data to SVG coordinates."""

    x_max: float
    y_lo: float
    y_hi: float
    width: int = 520
    height: int = 320
    pad: int = 52

    def sx(self, x: float) -> float:
        return self.pad + (self.width - 2 * self.pad) * x / self.x_max

    def sy(self, y: float) -> float:
        span = max(1, self.y_hi - self.y_lo)
        return self.height - self.pad - (self.height - 2 * self.pad) * (y - self.y_lo) / span


def _frame(points: tuple[CurvePoint, ...]) -> _Frame:
    xs = [_x(p) for p in points] or [0.0]
    ys = [p.model_calls for p in points]
    for p in points:
        ys += [*p.predicted_range]
        if p.predicted_model_calls is not None:
            ys.append(p.predicted_model_calls)
    return _Frame(max(xs) * 1.1 or 1.0, min(ys or [0]) - 1, max(ys or [1]) + 1)


def curve_svg_markup(curve: CurveRecord) -> str:
    """Paid model calls (measured: filled dots on a line; predicted: hollow squares, with the range the
    policy's jitter allows as a bar) against the measured down time, or, for a retry-policy curve, against
    max_attempts with one line per `on_max_attempts` (pause solid, kill dashed), as SVG markup."""
    points = curve.points
    policy = curve.varies == "max attempts"
    frame = _frame(points)
    parts = [
        *_axes(frame, curve.name, points, policy=policy),
        *_predicted(frame, points),
        *_measured(frame, points),
        *_legend(frame, policy=policy),
        "</svg>",
    ]
    return "\n".join(parts)


def _axes(frame: _Frame, name: str, points: tuple[CurvePoint, ...], *, policy: bool) -> list[str]:
    """The frame, the title, the axes with their labels, and the y axis's grid."""
    width, height, pad = frame.width, frame.height, frame.pad
    against = "max_attempts" if policy else "down time"
    name = escape(name)
    parts = [
        f'<svg class="curve" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11" role="img" '
        f'aria-label="{name}: paid model calls against {against}, measured and predicted">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="13">{name}: paid model '
        f"calls against {against}</text>",
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>',
        f'<text x="{width / 2}" y="{height - 12}" text-anchor="middle">'
        f"{'max_attempts (restart delay ' + _delays(points) + ' s)' if policy else 'measured down time (s)'}"
        "</text>",
        f'<text x="14" y="{height / 2}" transform="rotate(-90 14 {height / 2})" '
        'text-anchor="middle">paid model calls</text>',
    ]
    for y in range(int(frame.y_lo) + 1, int(frame.y_hi)):
        sy = frame.sy(y)
        parts.append(f'<text x="{pad - 6}" y="{sy + 4:.1f}" text-anchor="end">{y}</text>')
        parts.append(f'<line x1="{pad}" x2="{width - pad}" y1="{sy:.1f}" y2="{sy:.1f}" stroke="#eee"/>')
    return parts


def _predicted(frame: _Frame, points: tuple[CurvePoint, ...]) -> list[str]:
    """Each point's predicted range (a dashed bar) and prediction (a hollow square), and its x tick."""
    parts = []
    labelled: set[str] = set()
    for p in points:
        low, high = p.predicted_range
        x = frame.sx(_x(p))
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{frame.sy(low):.1f}" y2="{frame.sy(high):.1f}" '
            f'stroke="{PREDICTED}" stroke-width="1" stroke-dasharray="3 2"/>'
        )
        if p.predicted_model_calls is not None:
            py = frame.sy(p.predicted_model_calls)
            parts.append(
                f'<rect class="predicted" x="{x - 7:.1f}" y="{py - 7:.1f}" width="14" height="14" '
                'fill="none" '
                f'stroke="{PREDICTED}" stroke-width="2"><title>predicted {p.predicted_model_calls} paid '
                f"calls at {p.down_time:.3f} s down (policy allows {low} to {high})</title></rect>"
            )
        tick = f"{p.max_attempts}" if p.max_attempts is not None else f"{p.down_time:.2f}"
        if tick not in labelled:
            labelled.add(tick)
            parts.append(
                f'<text x="{x:.1f}" y="{frame.height - frame.pad + 14}" text-anchor="middle">{tick}</text>'
            )
    return parts


def _measured(frame: _Frame, points: tuple[CurvePoint, ...]) -> list[str]:
    """The measured line (one per `on_max_attempts`, kill dashed on top) and its dots."""
    parts = []
    series = sorted({p.on_max_attempts for p in points}, key=lambda on: on == "kill")  # kill on top
    for on in series:
        line = [p for p in points if p.on_max_attempts == on]
        path_d = " ".join(
            f"{'M' if i == 0 else 'L'}{frame.sx(_x(p)):.1f},{frame.sy(p.model_calls):.1f}"
            for i, p in enumerate(line)
        )
        style = f'stroke="{KILLED}" stroke-dasharray="6 4"' if on == "kill" else f'stroke="{MEASURED}"'
        parts.append(f'<path d="{path_d}" fill="none" {style} stroke-width="2"/>')
    for p in points:
        then = f", then {p.on_max_attempts}" if p.on_max_attempts else ""
        parts.append(
            f'<circle class="measured" cx="{frame.sx(_x(p)):.1f}" cy="{frame.sy(p.model_calls):.1f}" r="4" '
            f'fill="{MEASURED}"><title>measured {p.model_calls} paid calls after {p.down_time:.3f} s '
            f"down (restart delay {p.delay:g} s{then})</title></circle>"
        )
    return parts


def _legend(frame: _Frame, *, policy: bool) -> list[str]:
    pad = frame.pad
    # A retry-policy curve rises to the right: its legend goes top left, out of the line's way.
    legend_x = pad + 24 if policy else frame.width - pad - 150
    parts = [
        f'<circle cx="{legend_x}" cy="{pad - 4}" r="4" fill="{MEASURED}"/>'
        f'<text x="{legend_x + 10}" y="{pad}" fill="{MEASURED}">measured</text>'
        f'<rect x="{legend_x - 6}" y="{pad + 6}" width="12" height="12" fill="none" stroke="{PREDICTED}" '
        'stroke-width="2"/>'
        f'<text x="{legend_x + 10}" y="{pad + 16}" fill="{PREDICTED}">predicted (dashes: range)</text>'
    ]
    if policy:
        parts.append(
            f'<text x="{legend_x + 10}" y="{pad + 32}" fill="{MEASURED}">line: then pause;</text>'
            f'<text x="{legend_x + 10}" y="{pad + 46}" fill="{KILLED}">dashed: then kill</text>'
        )
    return parts


def _delays(points: tuple[CurvePoint, ...]) -> str:
    return ", ".join(sorted({f"{p.delay:g}" for p in points}))


def curve_svg(curve: CurveRecord, path: Path) -> Path:
    """Write paid model calls (measured, and predicted) against down time as an SVG file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(curve_svg_markup(curve) + "\n")
    return path
