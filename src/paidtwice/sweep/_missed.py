"""Why a point's kill missed its moment, read from the point's journal where the sweep can tell."""

from __future__ import annotations

from paidtwice.engine import epoch
from paidtwice.results import PointResult

__all__ = ["short_pause"]


def short_pause(point: PointResult) -> str | None:
    """Why a pause point's kill missed the pause, when the pause ended first: the server appended the
    sleep's completion before the kill (the pause was shorter than the lab takes to kill on this machine)."""
    if point.kind != "pause" or point.confirmed or point.started_at is None or point.killed_at is None:
        return None
    kill = point.started_at + point.killed_at
    sleeps = [epoch(e.appended_at) for e in point.journal if e.type == "Command: Sleep"]
    woken = [epoch(e.appended_at) for e in point.journal if e.type == "Notification: Sleep"]
    # Sleeps one after another: the n-th completion is the n-th sleep's; the pause is the last begun.
    began = [at for at in sleeps if at is not None and at <= kill]
    if not began or len(woken) < len(began) or (ended := woken[len(began) - 1]) is None or ended > kill:
        return None
    start = began[-1]
    return (
        f"the pause lasted {ended - start:.2f}s and ended before the kill, which came {kill - start:.2f}s "
        "after it began: shorter than the lab needs to kill inside it on this machine (a longer sleep, or "
        "a less loaded machine, lets the kill land in it)"
    )
