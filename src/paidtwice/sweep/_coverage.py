"""What a run reached (`paidtwice.results.Coverage`): the tools the model was offered and those the stub's
answers called, the hosted tools no answer can call, the waits the sweep resolved, and the handlers of the
run's invocation tree that ran."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from paidtwice.agent import renamed_service
from paidtwice.results import Coverage
from paidtwice.stub import ModelCall

if TYPE_CHECKING:
    from paidtwice.sweep._runs import SweepRun

__all__ = ["coverage_of"]

_CALLS = ("Command: Call", "Command: OneWayCall")


def coverage_of(run: SweepRun, calls: Sequence[ModelCall]) -> Coverage:
    """What `run` reached, from the stub's ledger (its `calls`), its waits and the server's invocations."""
    waits = run.resolver.waits()
    label = {w.n: _wait_label(w.kind, w.name, sum(1 for v in waits[: i + 1] if v.kind == w.kind))
             for i, w in enumerate(waits)}  # fmt: skip
    return Coverage(
        tools_offered=_union(name for c in calls for name in c.offered),
        tools_called=_union(t.name for c in calls if c.delivered for t in c.answer.tool_calls),
        hosted_tools=_union(name for c in calls for name in c.hosted),
        waits_resolved=_union(label[w.n] for w in waits if w.n in run.resolver.resolved),
        waits_unresolved=_union(label[w.n] for w in waits if w.n not in run.resolver.resolved),
        handlers_ran=_handlers_ran(run, calls),
    )


def _wait_label(kind: str, name: str, nth: int) -> str:
    # An awakeable's id is the run's own: its place among the run's awakeables names it across runs.
    return f"awakeable {nth}" if kind == "awakeable" else f"promise {name!r}"


def _handlers_ran(run: SweepRun, calls: Sequence[ModelCall]) -> tuple[str, ...]:
    """The swept handler, then those of its tree that made model calls or that the server ran for it (the
    invocations it called or sent to, and theirs), by the names the user's code gives them."""
    swept = f"{run.target.service}/{run.target.handler}"
    ran = [swept, *(c.by for c in calls if c.by)]
    if run.invocation_id and any(e.type in _CALLS for e in run.journal()):
        tag = run.service.removeprefix(renamed_service(run.target.service, ""))
        parents = [run.invocation_id]
        while parents:
            rows = [row for parent in parents for row in run.lab.sql.callees(parent)]
            for row in rows:
                service, _, handler = row.target.partition("/")
                ran.append(f"{service.removesuffix('_' + tag)}/{handler}")
            parents = [row.id for row in rows]
    return _union(ran)


def _union(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))
