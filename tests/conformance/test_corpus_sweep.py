"""Each conformance corpus app (tests/conformance/apps) as a new user runs it, with no configuration: linted
(no finding), swept (every kill placed, nothing paid twice) and its journals replay-checked (unchanged they
replay; with the model step renamed they diverge). Every sweep starts with the module, at once, on the
session's server, one variation each."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from support import DEADLINE

from paidtwice.lab import Lab
from paidtwice.replay import save_with_prefix
from paidtwice.results import PointResult
from paidtwice.sweep import Answers, sweep
from paidtwice.sweep._sweep import SweepMatrix
from paidtwice.targets import TargetSpec
from paidtwice.testing import assert_pays_once

APPS = Path(__file__).resolve().parent / "apps"
SWEPT = ("service_app", "object_app", "workflow_app", "signals_app")

_Swept = Future[list[SweepMatrix]]


def paidtwice(*args: str, cwd: Path = APPS) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paidtwice", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        timeout=DEADLINE,
    )


@pytest.fixture(scope="module")
def journals(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("corpus-journals")


@pytest.fixture(scope="module")
def started(lab: Lab, journals: Path) -> Iterator[dict[str, _Swept]]:
    """Every app's sweep, started with the module; each point's final journal saved under its app."""

    def saver(app: str) -> object:
        def save(point: PointResult) -> None:
            name = f"{point.service}-{point.handler}-{point.order:02d}"
            save_with_prefix(
                lab.sql,
                journals / app,
                name,
                point.invocation_id,
                point.journal_at_kill,
                service=point.service,
            )

        return save

    with ThreadPoolExecutor(max_workers=len(SWEPT)) as pool:
        yield {
            app: pool.submit(
                sweep,
                TargetSpec(app=app, app_dir=APPS),
                answers=Answers(variations=("steady",)),
                lab=lab,
                on_point=saver(app),  # type: ignore[arg-type]
            )
            for app in SWEPT
        }


_Checked = Future[tuple[list[str], subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]]


@pytest.fixture(scope="module", autouse=True)
def replayed(
    started: dict[str, _Swept], journals: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, _Checked]]:
    """Each app's journals replay-checked as soon as its sweep ended, beside the sweeps still running: the
    journals saved, `replay-check` of them on the app as it is, and on a copy with the model step renamed
    (the two at once). They use the CPU while the sweeps mostly wait; after the sweeps, one by one, they
    added their whole time to the file's. Started with the module, as the sweeps are."""
    copies = {app: tmp_path_factory.mktemp(f"renamed-{app}") / "apps" for app in SWEPT}

    def check(
        app: str,
    ) -> tuple[list[str], subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
        started[app].result()
        saved = [str(p) for p in sorted((journals / app).glob("*[0-9].json"))]
        renamed = copies[app]
        shutil.copytree(APPS, renamed, ignore=shutil.ignore_patterns("__pycache__"))
        source = renamed / f"{app}.py"
        source.write_text(re.sub(r'(run_typed\(\s*)"ask"', r'\1"ask_again"', source.read_text()))
        with ThreadPoolExecutor(max_workers=2) as both:
            kept = both.submit(paidtwice, "replay-check", "--app", app, "--app-dir", ".", *saved)
            moved = both.submit(
                paidtwice, "replay-check", "--app", app, "--app-dir", ".", *saved, cwd=renamed
            )
            return saved, kept.result(), moved.result()

    with ThreadPoolExecutor(max_workers=len(SWEPT)) as pool:
        yield {app: pool.submit(check, app) for app in SWEPT}


def test_the_corpus_has_no_lint_finding() -> None:
    done = paidtwice("lint", ".")
    assert done.returncode == 0 and "0 findings" in done.stdout + done.stderr, done.stdout + done.stderr


@pytest.mark.parametrize("app", SWEPT)
def test_every_kill_is_placed_and_nothing_is_paid_twice(started: dict[str, _Swept], app: str) -> None:
    matrices = started[app].result()
    assert matrices and all(m.points for m in matrices), [m.not_swept for m in matrices]
    # A handler that asks no model (a tray's reset, a recheck's count) is swept for its steps and journal.
    assert_pays_once([m for m in matrices if m.clean.model_calls])
    points = [p for m in matrices for p in m.points]
    assert not [p.crash_point for p in points if p.pays_twice]
    missed = [f"{p.service}/{p.handler} {p.crash_point}: {p.not_placed}" for p in points if not p.confirmed]
    assert not missed, missed


@pytest.mark.parametrize("app", SWEPT)
def test_the_journals_replay_and_a_renamed_step_diverges(replayed: dict[str, _Checked], app: str) -> None:
    saved, kept, moved = replayed[app].result()
    assert saved, f"no journal saved for {app}"
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert moved.returncode == 1 and "Traceback" not in moved.stderr, moved.stdout + moved.stderr


def test_state_preloaded_by_name_is_refused_in_one_line_as_the_server_would() -> None:
    # restate-sdk 1.3.0 describes `state_preload=[...]` only in manifest v5; restate-server 1.7.12 asks v4.
    done = paidtwice("sweep", "--app", "preload_app", "--app-dir", ".", "--check")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "eagerStateKeysWhitelist is only supported in discovery protocol version 5" in done.stderr
