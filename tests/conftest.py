"""One real restate-server and one stub for the whole test session; each test makes its own invocations."""

from __future__ import annotations

import compileall
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import DEADLINE
from tiers import LONGEST, QUICK, SHARED_FILES, SHARED_FIXTURES
from xdist.scheduler import LoadFileScheduling

from paidtwice.deck import EXPERIMENTS, Deck
from paidtwice.lab import Lab
from paidtwice.replay import load_journal, save_journal
from paidtwice.results import RunRecord

JOURNALS = Path(__file__).parent / "fixtures" / "journals"

# A suite started in the background of a script (`bash .ci/run &`, `nohup ... &` from a non-interactive
# shell) inherits SIGINT ignored, and so would every paidtwice the tests start: Python keeps an ignored SIGINT
# ignored, the Ctrl-C tests' SIGINT would be lost and the command would finish its work (exit 0). Caught
# here, it is back to its default in every process the tests start (exec resets a caught signal), as in a
# terminal. tests/cli/test_interrupt.py checks it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    """pytest-xdist hands out a run's files most tests first unless told not to: the longest files (a few
    tests each, behind one long sweep) started last, and a worker ran one alone long after the others were
    idle. Off, the files go in the order collected: tests/tiers.py's LONGEST first."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    if not hasattr(config, "workerinput"):
        _write_bytecode(Path(str(config.rootpath)))


def _write_bytecode(root: Path) -> None:
    """Compile paidtwice and the tests' and examples' agents once, before the workers start: with
    PYTHONDONTWRITEBYTECODE set (as in these machines' shells) no process writes its bytecode, and each of the
    hundreds of Python processes the tests start compiled every module of paidtwice it imports again (about
    0.3 of its 0.9 CPU-seconds for `python -m paidtwice --help`). Files already compiled are only checked."""
    for folder in ("src", "tests", "examples"):
        for where, dirs, files in os.walk(root / folder):
            # The JavaScript agents' installed packages: thousands of files, none of them ours.
            dirs[:] = [d for d in dirs if d not in ("node_modules", "__pycache__")]
            for name in files:
                if name.endswith(".py"):
                    compileall.compile_file(os.path.join(where, name), quiet=2)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Iterator[None]:
    """Keep the test modules pytest rewrote for its asserts while it collects them, whatever
    PYTHONDONTWRITEBYTECODE says: without them each worker rewrote every test file again (collecting took
    15 CPU-seconds a worker, not 10). Only while collecting: a test's own folders stay as it made them."""
    writes = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        return (yield)
    finally:
        sys.dont_write_bytecode = writes


class _FileOrSharedScheduling(LoadFileScheduling):
    """`--dist loadfile`, but tests/tiers.py's SHARED_FILES are one unit: one worker runs them all, so the
    session fixtures they share (a run of the deck, three replay-checks) are made once in the run."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        return _SHARED_UNIT if path in SHARED_FILES else path


_SHARED_UNIT = "tests/tiers.py::SHARED_FILES"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LoadFileScheduling | None:
    if config.getoption("dist") == "loadfile":
        return _FileOrSharedScheduling(config, log)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the quick tier (tests/tiers.py). An entry whose file was collected but that names no test is a
    usage error: the tier would shrink without anyone seeing it."""
    matched: set[str] = set()
    files = set()
    for item in items:
        name = item.nodeid.split("[")[0]
        path = name.split("::")[0]
        files.add(path)
        for entry in (path, name):
            if entry in QUICK:
                item.add_marker(pytest.mark.quick)
                matched.add(entry)
    stale = [entry for entry in QUICK if entry not in matched and entry.split("::")[0] in files]
    if stale:
        raise pytest.UsageError(f"tests/tiers.py names tests that do not exist: {', '.join(stale)}")
    _check_shared(config, items)
    _longest_first(config, items)


def _check_shared(config: pytest.Config, items: list[pytest.Item]) -> None:
    """SHARED_FILES are exactly the files whose tests use a SHARED_FIXTURES fixture: one left out would
    make the fixture again on another worker, one listed that uses none would only lengthen the unit."""
    root = Path(str(config.rootpath))
    missing = [path for path in SHARED_FILES if not (root / path).is_file()]
    using: dict[str, bool] = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        uses = bool(set(getattr(item, "fixturenames", ())) & set(SHARED_FIXTURES))
        using[path] = using.get(path, False) or uses
    unlisted = sorted(path for path, uses in using.items() if uses and path not in SHARED_FILES)
    idle = sorted(path for path, uses in using.items() if not uses and path in SHARED_FILES)
    if missing or unlisted or idle:
        raise pytest.UsageError(
            "tests/tiers.py's SHARED_FILES must be the files using "
            f"{', '.join(SHARED_FIXTURES)}: missing {missing}, not listed {unlisted}, using none {idle}"
        )


def _longest_first(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Collect the units of work longest first by tests/tiers.py's LONGEST (a file, or SHARED_FILES as one
    unit of their summed time; each file's tests together and in their own order, so a module's fixtures
    are still made once), the others after them as found."""
    root = Path(str(config.rootpath))
    missing = [path for path in LONGEST if not (root / path).is_file()]
    if missing:
        raise pytest.UsageError(
            f"tests/tiers.py's LONGEST names files that do not exist: {', '.join(missing)}"
        )

    def unit(path: str) -> str:
        return _SHARED_UNIT if path in SHARED_FILES else path

    seconds = {_SHARED_UNIT: sum(LONGEST.get(path, 0) for path in SHARED_FILES)}
    seconds.update({path: figure for path, figure in LONGEST.items() if path not in SHARED_FILES})
    first: dict[str, int] = {}
    for n, item in enumerate(items):
        first.setdefault(unit(item.nodeid.split("::")[0]), n)
    order = {id(item): n for n, item in enumerate(items)}

    def key(item: pytest.Item) -> tuple[float, int, float, int]:
        path = item.nodeid.split("::")[0]
        return (-seconds.get(unit(path), 0), first[unit(path)], -LONGEST.get(path, 0), order[id(item)])

    items.sort(key=key)


@pytest.fixture(scope="session", autouse=True)
def _plans_of_this_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The plans sweeps keep (paidtwice.sweep's kept plans) go to this session's own folder, for every sweep
    and every command the tests start: a run of the suite starts with none kept, as CI's does, and leaves
    none in the user's cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PAIDTWICE_PLANS", str(tmp_path_factory.mktemp("plans")))
        yield


@pytest.fixture(scope="session")
def lab() -> Iterator[Lab]:
    with Lab(echo=lambda message: None) as running:
        yield running


@pytest.fixture(scope="session")
def deck_records(lab: Lab) -> dict[str, RunRecord]:
    """Every plain row of the deck, run once, concurrently, on the shared server. The node kill needs a
    cluster: it runs on `cluster_lab`, in test_cluster.py."""
    rows = [row for row in EXPERIMENTS if row.fault.kind != "node-kill-in-pause"]
    records = Deck(lab).run_many([(row, None) for row in rows], concurrent=True)
    return {record.name: record for record in records}


@pytest.fixture(scope="session")
def replay_check_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ...]:
    """`replay-check --json FILE --html PAGE` on the captured journal fixtures against the deck's agent,
    three runs: the clean journal and two of its prefixes on naive code with drifting answers; the naive
    changed-for-good journal on the journaled fix; the clean journal on naive code with steady answers.
    Each run's results file, its page beside it (.html)."""
    work = tmp_path_factory.mktemp("replay-check")
    clean = load_journal(JOURNALS / "clean.json")
    prefixes = [save_journal(work / f"clean-prefix-{i}.json", clean.prefix(i)) for i in (1, 3)]
    runs = [
        ("naive-drifting", "naive", "drifting", [*prefixes, JOURNALS / "clean.json"]),
        ("journaled-fix", "journaled", "steady", [JOURNALS / "naive-changed-for-good.json"]),
        ("naive-steady", "naive", "steady", [JOURNALS / "clean.json"]),
    ]
    results = []
    for name, mode, script, journals in runs:
        out = work / f"{name}.json"
        done = subprocess.run(
            [sys.executable, "-m", "paidtwice", "replay-check", "--app", "paidtwice.agent.weather:app"]
            + ["--script", script, "--json", str(out), "--html", str(out.with_suffix(".html"))]
            + [str(j) for j in journals],
            capture_output=True,
            text=True,
            env={
                **os.environ,
                "PAIDTWICE_AGENT_MODE": mode,
                "PAIDTWICE_SERVICE": load_journal(journals[0]).service,
            },
            timeout=DEADLINE,
        )
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
        results.append(out)
    return tuple(results)


@pytest.fixture(scope="session")
def cluster_lab() -> Iterator[Lab]:
    """One real 3-node Restate cluster and its own stub for the whole session; its tests kill its nodes."""
    with Lab(echo=lambda message: None, cluster=3) as running:
        yield running
