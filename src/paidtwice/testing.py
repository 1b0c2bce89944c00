"""Assert in your own tests that no crash point makes your agent pay twice.

    from paidtwice.testing import assert_pays_once, assert_replays, sweep_app

    def test_travel_agent_pays_once(paidtwice_lab):
        matrices = sweep_app(
            "agent:app", service="Travel", handler="quote", input="How much is 120 EUR in USD?",
            script="tests/travel.toml", lab=paidtwice_lab,
        )
        assert_pays_once(matrices)

    def test_new_code_replays_production_journals():
        assert_replays("agent:app", ["tests/journals/"])   # captured with `paidtwice capture`, offline

The `paidtwice_lab` fixture (one restate-server and one stub for the session) is registered as a pytest
plugin when paidtwice is installed. Both asserts also take a target (`DeckTarget("journaled")`): see
docs/how-to/pytest.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from paidtwice._exceptions import UsageError
from paidtwice._words import count
from paidtwice.lab import Lab
from paidtwice.replay import JournalFile, Replayer, journal_paths, load_journal
from paidtwice.results import ReplayResult, SweepMatrix
from paidtwice.stub import VARIATIONS
from paidtwice.sweep import Answers, sweep
from paidtwice.targets import Target, TargetSpec

__all__ = ["assert_pays_once", "assert_replays", "paidtwice_lab", "sweep_app"]


def sweep_app(
    app: str | Target,
    *,
    service: str | None = None,
    handler: str | None = None,
    input: Any = None,
    script: str | Path | None = None,
    variations: Sequence[str] = VARIATIONS,
    app_dir: str | Path | None = None,
    lab: Lab | None = None,
    key: str | None = None,
    every_tool: bool = False,
) -> list[SweepMatrix]:
    """Sweep a user's handler at every crash point, one matrix per handler and script variation: the
    `service`/`handler` named, or (neither named) every handler the app registers. `app` is MODULE:APP
    (that app object, whatever modules its services come from) or MODULE (every service it defines), or a
    target already built (`paidtwice.targets`: `DeckTarget("journaled")`, an `AppTarget`, a
    `CommandTarget`), which names its own service, handler, input and directory. A Virtual Object's or a
    Workflow's handler is called with `key` (by default "paidtwice"). Without `script` (or with "auto"), the
    stub answers a user's code from each request (the deck's agent, from the stub's scripts named by
    `variations`); without `input`, a handler gets one made from its input schema. With `every_tool` (auto
    answers), each tool offered that no clean run called gets runs of its own, swept too."""
    answers = Answers(script=script, variations=tuple(variations), every_tool=every_tool)
    if isinstance(app, str):
        spec = TargetSpec(app=app, service=service, handler=handler, input=input, app_dir=app_dir, key=key)
        return sweep(spec, answers=answers, lab=lab)
    if service or handler or input is not None or app_dir is not None:
        raise UsageError("a target names its own service, handler, input and directory: give it alone")
    return sweep(app if key is None else dataclasses.replace(app, key=key), answers=answers, lab=lab)


def assert_pays_once(
    swept: Sequence[SweepMatrix] | Target,
    *,
    allow_in_flight: bool = True,
    lab: Lab | None = None,
    script: str | Path | None = None,
    variations: Sequence[str] = VARIATIONS,
) -> list[SweepMatrix]:
    """Fail when a crash point paid again for a model call or a step that had completed.

    `swept` is a sweep's matrices, or a target (`paidtwice.targets.Target`), swept here first as
    `sweep_app(target, script=script, variations=variations, lab=lab)` does. A call cut off in flight is
    paid again by any design (its answer never arrived); `allow_in_flight=False` fails on those too. A sweep
    that checked nothing (no crash point, or a clean run that made no model call at the stub) fails as
    well: it proves nothing. Returns the matrices.
    """
    if isinstance(swept, Sequence):
        matrices = list(swept)
    else:
        matrices = sweep_app(swept, script=script, variations=variations, lab=lab)
    _check_pays_once(matrices, allow_in_flight=allow_in_flight)
    return matrices


def _check_pays_once(matrices: Sequence[SweepMatrix], *, allow_in_flight: bool) -> None:
    if not any(matrix.points for matrix in matrices):
        raise AssertionError("nothing was checked: the sweep has no crash point")
    blind = [m.script for m in matrices if m.clean.model_calls == 0]
    if blind:
        raise AssertionError(f"nothing was checked under {', '.join(blind)}: no model call reached the stub")
    bad = []
    for matrix in matrices:
        for point in matrix.points:
            twice = point.pays_twice or (
                not allow_in_flight and (point.extra_model_calls > 0 or point.extra_step_runs > 0)
            )
            if twice:
                line = (
                    f"{matrix.script}: {point.crash_point}: "
                    f"{count(point.answers_asked_again, 'answer')} asked for again, "
                    f"{count(point.extra_model_calls, 'model call', sign=True)} "
                    f"({point.model_calls_in_flight} in flight), "
                    f"{count(point.extra_step_runs, 'step run', sign=True)}"
                )
                path = point.shorter_path(matrix.clean)
                bad.append(line + (f"; a shorter path: {path}" if path else ""))
    if bad:
        raise AssertionError(f"paid twice at {count(len(bad), 'crash point')}:\n  " + "\n  ".join(bad))


def assert_replays(
    app: Any | Target,
    journals: Sequence[str | Path | JournalFile],
    *,
    app_dir: str | Path | None = None,
    script: str | Path = "steady",
    allow_continues: bool = True,
) -> list[ReplayResult]:
    """Fail when a journal does not replay on `app` (MODULE:APP, MODULE, or the app object, imported from
    `app_dir`; or a target, `paidtwice.targets`, which names its own directory), offline.

    `journals` are journal files, directories of them, or loaded journals. A journal that is incomplete
    and replays up to its end "continues"; `allow_continues=False` fails on those too. Returns the results.
    """
    loaded: list[JournalFile] = []
    for item in journals:
        if isinstance(item, JournalFile):
            loaded.append(item)
        else:
            loaded.extend(load_journal(path) for path in journal_paths([Path(item)]))
    if not loaded:
        raise AssertionError(f"no journals to replay in {list(journals)}")
    if isinstance(app, Target):
        if app_dir is not None:
            raise UsageError("a target names its own directory: give it alone")
        replayer = Replayer.of(app, script=script)
    else:
        replayer = Replayer(app, app_dir=app_dir, script=script)
    with replayer:
        results = replayer.replay_journals(loaded)
    bad = [r for r in results if not r.ok or (not allow_continues and r.verdict == "continues")]
    if bad:
        lines = "\n  ".join(r.describe() for r in bad)
        raise AssertionError(
            f"{len(bad)} of {count(len(results), 'journal')} "
            f"{'does' if len(bad) == 1 else 'do'} not replay:\n  {lines}"
        )
    return results


@pytest.fixture(scope="session")
def paidtwice_lab() -> Iterator[Lab]:
    """A running lab (restate-server and stub) for the whole test session."""
    with Lab(echo=lambda message: None) as lab:
        yield lab
