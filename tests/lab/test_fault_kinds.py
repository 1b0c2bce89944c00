"""A fault kind is registered whole: defined in deck/_faults.py, in `FAULT_KINDS` (the one list of kinds),
used by a row, and run by a test (the recipe: `paidtwice.deck`'s docstring). Read from the code, no server."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from paidtwice.deck import COMPARISONS, CURVES, EXPERIMENTS, FAULT_KINDS, SCENARIOS, WALKS, Experiment, Fault
from paidtwice.deck import _faults as faults_module

TESTS = Path(__file__).resolve().parent.parent
_NOT_EVIDENCE = {"test_api.py", Path(__file__).name}
"""Files that name every kind without running one."""


def every_row() -> list[Experiment]:
    """Every run the deck can make: its experiments and scenarios, curves' points, comparisons' sides, walks'
    stuck runs."""
    rows = [*EXPERIMENTS, *SCENARIOS]
    rows += [point for curve in CURVES for point, _ in curve.points()]
    rows += [run for pair in COMPARISONS for run in pair.runs()]
    rows += [walk.base for walk in WALKS]
    return rows


def defined_kinds(module: ModuleType) -> set[type[Fault]]:
    """The fault classes the module defines (the base left out)."""
    return {
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, Fault)
        and value is not Fault
        and value.__module__ == module.__name__
    }


def unregistered(defined: Iterable[type[Fault]], registry: Mapping[str, type[Fault]]) -> list[str]:
    """Kinds defined but not in the registry, or registered under a name that is not their own."""
    missing = [f"{kind.__name__} is not in FAULT_KINDS" for kind in defined if kind not in registry.values()]
    misnamed = [
        f"{kind.__name__} is registered as {name!r}" for name, kind in registry.items() if kind.kind != name
    ]
    return sorted(missing + misnamed)


def unused(registry: Mapping[str, type[Fault]], rows: Iterable[Experiment]) -> list[str]:
    used = {type(row.fault) for row in rows}
    return sorted(f"no row names {kind.__name__}" for kind in registry.values() if kind not in used)


def untested(
    registry: Mapping[str, type[Fault]], rows: Iterable[Experiment], texts: Iterable[str]
) -> list[str]:
    """Kinds no test names, by their class or by the quoted name of a row of theirs."""
    names: dict[type[Fault], set[str]] = {kind: {kind.__name__} for kind in registry.values()}
    for row in rows:
        names.setdefault(type(row.fault), set()).add(f'"{row.name}"')
    corpus = "\n".join(texts)
    return sorted(
        f"no test names {kind.__name__} or a row of it"
        for kind in registry.values()
        if not any(re.search(_whole(name), corpus) for name in names[kind])
    )


def _whole(name: str) -> str:
    """`name` as a whole word: KillLate is not named by KillLateness."""
    return re.escape(name) + (r"\b" if name[-1].isalnum() else "")


def _test_texts() -> list[str]:
    return [p.read_text() for p in sorted(TESTS.rglob("test_*.py")) if p.name not in _NOT_EVIDENCE]


def test_every_fault_kind_is_registered_exported_used_and_tested() -> None:
    rows = every_row()
    problems = unregistered(defined_kinds(faults_module), FAULT_KINDS)
    problems += unused(FAULT_KINDS, rows)
    problems += untested(FAULT_KINDS, rows, _test_texts())
    assert not problems, "half-registered (paidtwice.deck's docstring says how):\n" + "\n".join(problems)


def test_the_checks_see_a_half_registered_kind() -> None:
    @dataclass(frozen=True)
    class KillTwice(Fault):
        kind = "kill-twice"

    @dataclass(frozen=True)
    class KillLate(Fault):
        kind = "kill-late"

    fake = ModuleType("fake_faults")
    KillTwice.__module__ = KillLate.__module__ = fake.__name__
    fake.KillTwice, fake.KillLate = KillTwice, KillLate  # type: ignore[attr-defined]
    registry = {**FAULT_KINDS, "kill-late": KillLate, "late": KillLate}
    assert unregistered(defined_kinds(fake), registry) == [
        "KillLate is registered as 'late'",
        "KillTwice is not in FAULT_KINDS",
    ]
    late_row = Experiment("late-row", "naive", "steady", KillLate(), "", EXPERIMENTS[0].expected)
    assert unused({"kill-late": KillLate}, every_row()) == ["no row names KillLate"]
    assert unused({"kill-late": KillLate}, [late_row]) == []
    assert untested({"kill-late": KillLate}, [late_row], ["KillLateness()"]) == [
        "no test names KillLate or a row of it"
    ]
    assert untested({"kill-late": KillLate}, [late_row], ['records["late-row"]']) == []
    assert untested({"kill-late": KillLate}, [late_row], ["KillLate()"]) == []
