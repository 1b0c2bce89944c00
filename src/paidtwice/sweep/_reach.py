"""`--every-tool`: once the sweep is done, each tool a handler's model was offered and no clean run called
gets a clean run of its own per variation, whose first turns call that tool first
(`paidtwice.stub.reach_script`), and that run's points are swept as every other's are, so what follows the
tool is swept too. A tool first offered in such a run (behind the reached one) gets its own next round."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence

from paidtwice.results import Coverage, SweepMatrix
from paidtwice.stub import Script, reach_script
from paidtwice.targets import Target

__all__ = ["ROUNDS", "reach_every_tool"]

ROUNDS = 3
"""Rounds at most: a tool offered only behind a reached one is reached in the next; the bound keeps an app
that names its tools anew on every run from being swept forever."""

_Pair = tuple[Target, str, Script]


def reach_every_tool(
    sweep_more: Callable[[list[_Pair]], list[SweepMatrix]],
    swept: Sequence[tuple[_Pair, SweepMatrix]],
    *,
    variations: Sequence[str],
    seed: int,
) -> list[SweepMatrix]:
    """The matrices of the runs that reach the tools `swept` did not, in rounds; `sweep_more` sweeps the
    (target, script name, script) pairs it is given, one matrix each, in order."""
    found = list(swept)
    tried: set[tuple[int, str]] = set()
    added: list[SweepMatrix] = []
    for _ in range(ROUNDS):
        more: list[_Pair] = []
        for target, tools in _not_called(found):
            for tool in tools:
                if (id(target), tool) in tried:
                    continue
                tried.add((id(target), tool))
                more += [(target, f"{v}+{tool}", reach_script(v, tool, seed=seed)) for v in variations]
        if not more:
            break
        matrices = sweep_more(more)
        found += zip(more, matrices, strict=True)
        added += matrices
    return added


def _not_called(found: Sequence[tuple[_Pair, SweepMatrix]]) -> list[tuple[Target, tuple[str, ...]]]:
    """Each target's tools offered that none of its clean runs called, over every matrix of it so far: a
    replay's answer that called one (`changed`) did not make it swept, for no point lies after it."""
    by: dict[int, tuple[Target, list[Coverage], set[str]]] = {}
    for (target, _, _), matrix in found:
        _, seen, called = by.setdefault(id(target), (target, [], set()))
        seen.extend(p.coverage for p in matrix.points)
        called.update(matrix.clean.tools_called)
    not_called = []
    for target, seen, called in by.values():
        offered = functools.reduce(operator.or_, seen, Coverage()).tools_offered
        not_called.append((target, tuple(t for t in offered if t not in called)))
    return not_called
