"""The plan a sweep keeps: the crash points of its last clean run of the same code, so that the next sweep
starts its points at once, beside its clean run, instead of after it.

A plan is kept under a key: a hash of what the plan could depend on (paidtwice's own code, the target's
fields, the code files of the directory its code runs from, the script, the model's latency, the lab's size
and server version). It lives in `$PAIDTWICE_PLANS`, else `$PAIDTWICE_CACHE/plans`, else
`~/.cache/paidtwice/plans`, one JSON file a key; deleting the folder forgets every plan. A kept plan is only
a guess: the sweep compares it with the plan of the clean run that runs beside its points (`same_plan`),
and a plan that differs is thrown away, its points' runs with it (`paidtwice.sweep._schedule`). The key
only spares that guess when the code changed.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from paidtwice.engine import cache_root
from paidtwice.lab import Lab
from paidtwice.results import CrashPoint
from paidtwice.stub import RecordingScript, Script
from paidtwice.sweep._options import ModelStub
from paidtwice.targets import Target

__all__ = [
    "PLANS",
    "PLANS_ENV",
    "keep_plan",
    "kept_plan",
    "plan_key",
    "plans_dir",
    "same_plan",
    "tree_fingerprint",
]

PLANS = "plans"
"""The folder under paidtwice's cache that holds the kept plans."""

_FORMAT = 2
"""Changes when what a plan file holds changes: older files are then never read (2: a point's model holds
are names, `7/model:1`, no longer the tree's call numbers)."""
_SKIPPED_DIRS = frozenset(
    {"node_modules", "__pycache__", "venv", "site-packages", "build", "dist", "paidtwice-results"}
)
"""Folders of a code tree that are not the agent's own code (hidden folders are skipped too)."""
_CODE_SUFFIXES = frozenset(
    {".py", ".pyi", ".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs", ".java", ".kt", ".go", ".rs",
     ".rb", ".cs", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".lock", ".env", ".sh"}
)  # fmt: skip
_CODE_FILES = frozenset(
    {"package.json", "package-lock.json", "tsconfig.json", "deno.json", "go.mod", "go.sum", "Dockerfile",
     "requirements.txt", "Procfile"}
)  # fmt: skip
"""The files of a tree that are code or its configuration: records, reports and docs written beside it
(a sweep's own output among them) leave the fingerprint as it was."""
_MAX_FILES = 20_000
"""A tree with more files is not fingerprinted (no plan is kept for it): walking it would cost more than
the plan saves."""


PLANS_ENV = "PAIDTWICE_PLANS"
"""Names the folder of the kept plans instead (a test's own, say)."""


def plans_dir() -> Path:
    """Where the kept plans are: `$PAIDTWICE_PLANS`, else `$PAIDTWICE_CACHE/plans`, else
    `~/.cache/paidtwice/plans`."""
    own = os.environ.get(PLANS_ENV)
    return Path(own) if own else cache_root() / PLANS


def _walk(root: Path) -> Iterator[Path]:
    """The files of a code tree, in a stable order, without hidden, dependency and build folders."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS)
        for name in sorted(files):
            if name in _CODE_FILES or (not name.startswith(".") and Path(name).suffix in _CODE_SUFFIXES):
                yield Path(folder) / name


def tree_fingerprint(root: Path) -> str | None:
    """A hash of a code tree's code files (path, size, modification time); None when it has too many files
    or cannot be read. Any edit of a file changes its modification time, and so the fingerprint."""
    digest = hashlib.blake2b(digest_size=16)
    try:
        for n, path in enumerate(_walk(root)):
            if n >= _MAX_FILES:
                return None
            try:
                stat = path.stat()
            except FileNotFoundError:
                continue  # a file removed while the tree was walked
            digest.update(f"{path.relative_to(root)}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    except OSError:
        return None
    return digest.hexdigest()


@functools.cache
def _own_code() -> str | None:
    """paidtwice's own code: its planning is part of every plan."""
    return tree_fingerprint(Path(__file__).resolve().parent.parent)


def _script_key(script: Script) -> str | None:
    """What the script answers, as text; None for a script whose answers are not known before the run (a
    recording asks the real model) or whose description is not stable."""
    if isinstance(script, RecordingScript):
        return None
    fields = [(f.name, getattr(script, f.name)) for f in dataclasses.fields(script) if f.compare]
    text = f"{type(script).__module__}.{type(script).__qualname__}{fields!r}"
    return None if " at 0x" in text else text


def _code_tree(target: Target) -> str | None:
    """The fingerprint of the folder the target's code runs from (its `cwd`, else the current one); "" for
    paidtwice's own agent, whose code is paidtwice's."""
    cwd = getattr(target, "cwd", None)
    app = getattr(target, "app", None)
    if cwd is None and isinstance(app, str) and app.startswith("paidtwice."):
        return ""
    return tree_fingerprint(Path(cwd) if cwd else Path.cwd())


def plan_key(lab: Lab, target: Target, script: Script, model: ModelStub) -> str | None:
    """The key a plan of `target` under `script` is kept under; None when none can be kept."""
    answers = _script_key(script)
    tree = _code_tree(target)
    own = _own_code()
    if answers is None or tree is None or own is None or " at 0x" in repr(target):
        return None
    parts = [
        str(_FORMAT), own, tree, repr(target), answers, repr(model.latency), str(lab.cluster),
        lab.server_version, sys.version,
    ]  # fmt: skip
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=20).hexdigest()


def _point_of(fields: dict[str, object]) -> CrashPoint:
    """A point as a plan file holds it (JSON: its tuples are lists)."""
    holds = fields.get("model_holds") or ()
    waits = fields.get("held_waits") or ()
    return CrashPoint(**{**fields, "model_holds": tuple(holds), "held_waits": tuple(waits)})  # type: ignore[arg-type]


def kept_plan(key: str | None) -> list[CrashPoint] | None:
    """The plan kept under `key`; None when there is none (or its file cannot be read as one)."""
    if key is None:
        return None
    try:
        held = json.loads((plans_dir() / f"{key}.json").read_text())
        if held.get("format") != _FORMAT or held.get("key") != key or held.get("alone") is not True:
            return None
        return [_point_of(fields) for fields in held["points"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def kept_durations(key: str | None) -> dict[int, float]:
    """How long each point's run of the plan kept under `key` took the last time (seconds, by the point's
    order; those not measured are missing): the longest start first."""
    if key is None:
        return {}
    try:
        held = json.loads((plans_dir() / f"{key}.json").read_text())
        took = held.get("took", {}) if held.get("key") == key else {}
        return {int(order): float(seconds) for order, seconds in took.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def keep_plan(
    key: str | None, points: Sequence[CrashPoint], took: dict[int, float] | None = None, *, alone: bool
) -> None:
    """Keep `points` under `key` for the next sweep, with how long their runs took (by order) when known
    (written whole or not at all); a cache that cannot be written only costs the next sweep its head
    start. `alone`: the clean run's agent served no other service of the app; only such a plan is used
    (a point started beside the clean runs could call a service none of them has registered yet)."""
    if key is None:
        return
    folder = plans_dir()
    held = {
        "format": _FORMAT,
        "key": key,
        "points": [dataclasses.asdict(p) for p in points],
        "took": {str(order): seconds for order, seconds in (took or {}).items()},
        "alone": alone,
    }
    tmp = folder / f".{key}.{os.getpid()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(held, indent=1))
        tmp.replace(folder / f"{key}.json")
    except OSError:
        tmp.unlink(missing_ok=True)


def _planned(point: CrashPoint) -> CrashPoint:
    """What a point's run does, without the times it was measured at (`begins`, `covers`: the clean run's
    clock, which differs from run to run when the plan does not)."""
    return dataclasses.replace(point, begins=0.0, covers=0.0)


def same_plan(kept: Sequence[CrashPoint], fresh: Sequence[CrashPoint]) -> bool:
    """The kept plan runs the very points the clean run plans: the same moments, in the same order, each
    stopped, held and killed the same way (only the times they were measured at may differ)."""
    return [_planned(p) for p in kept] == [_planned(p) for p in fresh]
