"""What a command's code says that its wire does not, read from its folder (not its dependencies): whether it
names an awakeable (`mentions_awakeables`), and which shared handler of a Workflow resolves each of its
promises (`promise_resolvers_in`)."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

__all__ = ["mentions_awakeables", "promise_resolvers_in"]

_SOURCES = frozenset({".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs", ".py", ".go", ".java", ".kt"})
_NOT_THE_APP = frozenset({"node_modules", ".venv", "venv", ".git", "__pycache__", "target", ".tox"})
_MOST_FILES = 5000
_MOST_BYTES = 1 << 20
"""Bytes of a file read: the head of a generated bundle is enough to say what it names."""
_RESOLVED = re.compile(r"""promise\s*(?:<[^()]*?>)?\s*\(\s*["'`]([^"'`]+)["'`][^)]*\)\s*\.\s*resolve\s*\(""")
"""`ctx.promise("NAME").resolve(` (TypeScript's `promise<T>(...)` too)."""


class _TooLarge(Exception):
    """The folder has more source files than are read."""


def _code(folder: str) -> Iterator[bytes]:
    """The head of each source file under `folder`; `_TooLarge` past `_MOST_FILES` of them."""
    read = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in _NOT_THE_APP]
        for name in files:
            if Path(name).suffix not in _SOURCES:
                continue
            read += 1
            if read > _MOST_FILES:
                raise _TooLarge
            try:
                yield (Path(root) / name).read_bytes()[:_MOST_BYTES]
            except OSError:
                continue


def mentions_awakeables(folder: Path) -> bool:
    return _mentions_awakeables(str(folder.resolve()))


@functools.lru_cache(maxsize=64)
def _mentions_awakeables(folder: str) -> bool:
    """Whether the code under `folder` (the command's directory, not its dependencies) names an awakeable:
    nothing on the wire says one was made, so a quiet attempt is taken as waiting on one only then. True when
    the folder is too large to read, or cannot be read: a guess too many costs less than a wait unanswered."""
    try:
        return any(b"wakeable" in text for text in _code(folder))
    except _TooLarge:
        return True


def promise_resolvers_in(folder: Path, shared: Mapping[str, Sequence[str]]) -> dict[str, dict[str, str]]:
    """For each Workflow (`shared`: its shared handlers, by the Workflow's name in the code): the shared
    handler that resolves each of its promises, by the promise's name: the handler defined nearest before
    `promise("NAME").resolve(` in the code under `folder` (`function NAME(`, `NAME: ...`, `NAME = ...`, a
    method `NAME(`), else the Workflow's only shared handler."""
    key = tuple(sorted((name, tuple(handlers)) for name, handlers in shared.items()))
    return {name: dict(found) for name, found in _promise_resolvers_in(str(folder.resolve()), key)}


@functools.lru_cache(maxsize=64)
def _promise_resolvers_in(
    folder: str, shared: tuple[tuple[str, tuple[str, ...]], ...]
) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    found: dict[str, dict[str, str]] = {}
    handlers = {h for _, names in shared for h in names}
    if not handlers:
        return ()
    defined = re.compile(
        r"\bfunction\s*\*?\s*(?P<a>{0})\s*\(|\b(?P<b>{0})\s*[:=]|^\s*(?:async\s+)?(?P<c>{0})\s*\(".format(
            "|".join(re.escape(h) for h in sorted(handlers))
        ),
        re.MULTILINE,
    )
    try:
        texts = [text.decode(errors="replace") for text in _code(folder)]
    except _TooLarge:
        texts = []
    for text in texts:
        definitions = [
            (m.start(), m.group("a") or m.group("b") or m.group("c")) for m in defined.finditer(text)
        ]
        for resolved in _RESOLVED.finditer(text):
            before = [name for at, name in definitions if at < resolved.start()]
            for workflow, names in shared:
                handler = before[-1] if before and before[-1] in names else None
                if handler is None and len(names) == 1:
                    handler = names[0]
                if handler is not None:
                    found.setdefault(workflow, {}).setdefault(resolved.group(1), handler)
    return tuple((w, tuple(sorted(promises.items()))) for w, promises in sorted(found.items()))
