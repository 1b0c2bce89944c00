"""Parse a file with the grammar of the Python its project targets, not only the running one's.

The running Python's `ast` parses its own version's syntax and older. A project may target a newer Python (an
f-string nesting its own quotes is 3.12 syntax): when the running parser refuses a file, a newer interpreter
found on PATH (`python3.12`, ...) parses it and sends the tree back as JSON, rebuilt here as this Python's
nodes (node types this Python lacks, such as 3.12's `type X = ...`, become a `pass` or a `None` in place).
So a file is called a syntax error (PT000) only when no Python it may target parses it; when the project
targets a newer Python and none is found, the file is reported as not checked, naming the parser it needs.

The target is `--target-version`, else the lower bound of `requires-python` in the nearest pyproject.toml.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["NeedsNewerParser", "Parser", "Version", "parse_version", "project_target"]

Version = tuple[int, int]
"""A Python version, major and minor: (3, 12)."""

RUNNING: Version = (sys.version_info.major, sys.version_info.minor)
_LAST_MINOR = 20
"""The newest `python3.N` looked for on PATH."""
_TIMEOUT = 60.0
_STATEMENT_FIELDS = {"body", "orelse", "finalbody"}

# Run with `-I -c` by the newer interpreter: stdlib only, the source on stdin, the tree (or error) as JSON.
_DUMP = r"""
import ast, json, sys
def enc(n):
    if isinstance(n, ast.AST):
        d = {"_type": type(n).__name__}
        for f, v in ast.iter_fields(n):
            d[f] = enc(v)
        for a in n._attributes:
            if hasattr(n, a):
                d[a] = getattr(n, a)
        return d
    if isinstance(n, list):
        return [enc(x) for x in n]
    if isinstance(n, bytes):
        return {"_bytes": n.hex()}
    if n is Ellipsis:
        return {"_ellipsis": True}
    if isinstance(n, complex):
        return {"_complex": [n.real, n.imag]}
    return n
source = sys.stdin.buffer.read().decode("utf-8", "replace")
try:
    tree = ast.parse(source)
except SyntaxError as e:
    print(json.dumps({"error": [e.msg, e.lineno, e.offset]}))
else:
    print(json.dumps({"tree": enc(tree), "version": list(sys.version_info[:2])}))
"""


class NeedsNewerParser(Exception):
    """The file does not parse with the running Python, the project targets a newer one, and no interpreter
    of that version was found to parse it."""


def parse_version(text: str) -> Version:
    """ "3.12" -> (3, 12); ValueError for anything else."""
    match = re.fullmatch(r"\s*(?:py)?3\.?(\d{1,2})\s*", text)
    if match is None:
        raise ValueError(f"{text!r} is not a Python version like 3.12")
    return (3, int(match.group(1)))


def project_target(paths: Sequence[Path]) -> tuple[Version, str] | None:
    """The lower bound of `requires-python` in the pyproject.toml nearest the first path, and where it was
    read; None when there is none."""
    if not paths:
        return None
    start = paths[0].resolve()
    for folder in [start, *start.parents] if start.is_dir() else start.parents:
        pyproject = folder / "pyproject.toml"
        if not pyproject.is_file():
            continue
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return None
        project = data.get("project")
        requires = project.get("requires-python") if isinstance(project, dict) else None
        if not isinstance(requires, str):
            return None
        # The lowest version a bound admits: ">=3.12", "~=3.12", "==3.12.*", ">3.11" (3.11.1 is admitted).
        minors = [int(m) for m in re.findall(r"(?:>=|~=|==|>)\s*3\.(\d+)", requires)]
        if not minors:
            return None
        return (3, min(minors)), f"requires-python {requires!r} in {pyproject}"
    return None


class Parser:
    """Parses files as the target Python would, with a newer interpreter when the running one is older."""

    def __init__(self, target: Version | None = None, target_source: str = "") -> None:
        self.target = target
        """The Python the project targets; None when unknown."""
        self.target_source = target_source or (f"--target-version {target[0]}.{target[1]}" if target else "")
        """Where the target was read."""
        self._newer: list[tuple[Version, str]] | None = None

    def parse(self, text: str, path: str) -> ast.Module:
        """The file's tree. Raises SyntaxError when no Python the project may target parses it (PT000), and
        `NeedsNewerParser` when only a newer Python than any found could tell."""
        try:
            return ast.parse(text, filename=path)
        except SyntaxError as running_error:
            error = running_error
        for version, exe in self._newer_pythons():
            answer = _parse_with(exe, text)
            if answer is None:
                continue
            if "error" in answer:
                break  # a newer grammar refuses it too: a syntax error
            if self.target is not None and self.target < version and self.target <= RUNNING:
                error.msg = (
                    f"{error.msg} (parses as Python {version[0]}.{version[1]}, but the project targets "
                    f"{self.target[0]}.{self.target[1]}: {self.target_source})"
                )
                raise error
            tree = _rebuild(answer["tree"])
            if not isinstance(tree, ast.Module):
                continue
            return ast.fix_missing_locations(tree)
        if self.target is not None and self.target > RUNNING:
            want = f"{self.target[0]}.{self.target[1]}"
            raise NeedsNewerParser(
                f"not checked: this Python ({RUNNING[0]}.{RUNNING[1]}) cannot parse it (line {error.lineno}: "
                f"{error.msg}) and the project targets Python {want} ({self.target_source}); run paidtwice "
                f"lint with Python {want} or newer, or put python{want} on PATH"
            )
        raise error

    def _newer_pythons(self) -> list[tuple[Version, str]]:
        if self._newer is None:
            found: list[tuple[Version, str]] = []
            lowest = max(RUNNING[1] + 1, self.target[1] if self.target and self.target > RUNNING else 0)
            for minor in range(lowest, _LAST_MINOR + 1):
                exe = shutil.which(f"python3.{minor}")
                if exe is not None:
                    found.append(((3, minor), exe))
            self._newer = found
        return self._newer


def _parse_with(exe: str, text: str) -> dict[str, Any] | None:
    """The newer interpreter's answer; None when it does not run (a pyenv shim of a version not selected)."""
    try:
        done = subprocess.run(
            [exe, "-I", "-c", _DUMP],
            input=text.encode("utf-8"),
            capture_output=True,
            timeout=_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def _rebuild(data: Any, statement: bool = False) -> Any:
    if isinstance(data, list):
        return [_rebuild(item, statement) for item in data]
    if not isinstance(data, dict):
        return data
    if "_bytes" in data:
        return bytes.fromhex(data["_bytes"])
    if "_ellipsis" in data:
        return ...
    if "_complex" in data:
        real, imag = data["_complex"]
        return complex(real, imag)
    cls = getattr(ast, str(data.get("_type")), None)
    node: ast.AST
    if not (isinstance(cls, type) and issubclass(cls, ast.AST)):
        # A node this Python has no type for: nothing to lint in it, its place kept.
        node = ast.Pass() if statement else ast.Constant(value=None)
    else:
        node = cls()
        for field in cls._fields:
            setattr(node, field, _rebuild(data.get(field), field in _STATEMENT_FIELDS))
    for attribute in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        if attribute in data:
            setattr(node, attribute, data[attribute])
    return node
