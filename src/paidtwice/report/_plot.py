"""A small SVG plot of a restart-delay curve (no plotting library needed)."""

from __future__ import annotations

from pathlib import Path

from paidtwice.lab._records import CurveRecord

__all__ = ["curve_svg"]


def curve_svg(curve: CurveRecord, path: Path) -> Path:
    """Write paid model calls (measured, and predicted) against down time as an SVG file."""
    width, height, pad = 480, 300, 48
    points = curve.points
    xs = [p.down_time for p in points] or [0.0]
    ys = [p.model_calls for p in points] + [
        p.predicted_model_calls for p in points if p.predicted_model_calls is not None
    ]
    x_max = max(xs) * 1.1 or 1.0
    y_lo, y_hi = min(ys or [0]) - 1, max(ys or [1]) + 1

    def sx(x: float) -> float:
        return pad + (width - 2 * pad) * x / x_max

    def sy(y: float) -> float:
        return height - pad - (height - 2 * pad) * (y - y_lo) / max(1, y_hi - y_lo)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="13">{curve.name}: paid model '
        "calls against down time</text>",
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>',
        f'<text x="{width / 2}" y="{height - 12}" text-anchor="middle">down time (s)</text>',
        f'<text x="14" y="{height / 2}" transform="rotate(-90 14 {height / 2})" '
        'text-anchor="middle">paid model calls</text>',
    ]
    for y in range(int(y_lo) + 1, int(y_hi)):
        parts.append(f'<text x="{pad - 6}" y="{sy(y) + 4}" text-anchor="end">{y}</text>')
    path_d = " ".join(
        f"{'M' if i == 0 else 'L'}{sx(p.down_time):.1f},{sy(p.model_calls):.1f}" for i, p in enumerate(points)
    )
    parts.append(f'<path d="{path_d}" fill="none" stroke="#1f77b4" stroke-width="2"/>')
    for p in points:
        parts.append(
            f'<circle cx="{sx(p.down_time):.1f}" cy="{sy(p.model_calls):.1f}" r="4" fill="#1f77b4"/>'
        )
        parts.append(
            f'<text x="{sx(p.down_time):.1f}" y="{height - pad + 14}" '
            f'text-anchor="middle">{p.down_time:.2f}</text>'
        )
        if p.predicted_model_calls is not None:
            parts.append(
                f'<circle cx="{sx(p.down_time):.1f}" cy="{sy(p.predicted_model_calls):.1f}" r="7" '
                'fill="none" stroke="#d62728"/>'
            )
    parts.append(
        f'<text x="{width - pad}" y="{pad}" text-anchor="end" fill="#1f77b4">measured</text>'
        f'<text x="{width - pad}" y="{pad + 14}" text-anchor="end" fill="#d62728">predicted</text>'
    )
    parts.append("</svg>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts) + "\n")
    return path
