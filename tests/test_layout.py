"""The layout shows the architecture: click only under cli/, no cycle between packages, packages used through
their faces, short modules.

Read from the source with ast (every import counts: at the top, inside a function, under TYPE_CHECKING), so a
cycle hidden in a function-local import is still a cycle. The nodes are paidtwice's packages (engine, lab,
cli, ...) and its top-level modules (`_words`, `_exceptions`, `_pins`: leaves every package may use). The
user's face (`paidtwice/__init__.py`, `testing.py`, `__main__.py`) may import any package; a package that
imports the face back makes a cycle through it like any other. A package's own face is its `__init__`: what
another package imports of it comes from there (`from paidtwice.lab import Lab`), never from a `_private`
module (`from paidtwice.lab._lab import Lab`), so a package can move its insides and no other notices.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "paidtwice"

FACE = "paidtwice (face)"
"""The node of the user's face: `import paidtwice`, `paidtwice.testing`, `python -m paidtwice`."""
_FACE_MODULES = ("__init__", "testing", "__main__")
PRIVATE_ALLOWED: dict[tuple[str, str], str] = {
    # (importing file, imported private module): why it cannot go through the face, in one line. E.g.
    # ("agent/_proxy.py", "paidtwice.agent._wire"): "...",
}
"""Imports of another package's private module that stay, each with its reason (none today)."""
MAX_LINES = 700
"""A module of this many lines or more is too long to read as one idea."""
MAX_DOCSTRING_LINES = 20
"""A module docstring longer than this is a page of the docs: it says why, and points to docs/ for more."""


@dataclass(frozen=True)
class Import:
    """One import of a paidtwice module in a paidtwice module."""

    source: Path
    """The importing file, relative to the package's root."""
    line: int
    """Its line."""
    module: str
    """The imported module, dotted (`paidtwice.lab._poll`, or `click`)."""

    def __str__(self) -> str:
        return f"{self.source.as_posix()}:{self.line} imports {self.module}"


def _imports(root: Path) -> Iterator[Import]:
    """Every import in every module under `root` (a package's directory), relative ones made absolute."""
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        package = [root.name, *rel.parts[:-1]]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield Import(rel, node.lineno, alias.name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                if module == root.name:
                    # `from paidtwice import _words`: the names are what is imported (modules or the face's).
                    for alias in node.names:
                        yield Import(rel, node.lineno, f"{module}.{alias.name}")
                else:
                    yield Import(rel, node.lineno, module)
                    # `from paidtwice.lab import _runner` reaches into the module as its dotted path does.
                    for alias in node.names:
                        if alias.name.startswith("_"):
                            yield Import(rel, node.lineno, f"{module}.{alias.name}")


def _node(root: Path, parts: tuple[str, ...]) -> str:
    """The package (or top-level module, or the face) a module path inside `root` belongs to."""
    if not parts:
        return FACE
    if (root / parts[0]).is_dir():
        return parts[0]
    stem = parts[0].removesuffix(".py")
    if stem in _FACE_MODULES or not (root / f"{stem}.py").is_file():
        return FACE  # `from paidtwice import Lab`: a name the face exports
    return stem


def package_graph(root: Path) -> dict[tuple[str, str], list[Import]]:
    """Which node imports which, with the import lines that make each edge (a node's own imports left out)."""
    edges: dict[tuple[str, str], list[Import]] = defaultdict(list)
    for found in _imports(root):
        head, *rest = found.module.split(".")
        if head != root.name:
            continue
        importer = _node(root, found.source.parts)
        imported = _node(root, tuple(rest[:1]))
        if importer != imported:
            edges[importer, imported].append(found)
    return dict(edges)


def cycles(edges: dict[tuple[str, str], list[Import]]) -> list[list[str]]:
    """The cycles (paths back to their start) through the groups of nodes that import each other: Tarjan's
    strongly connected components, then the shortest way round from each member of each."""
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    # From each member its shortest way round, each cycle once (started at its least node).
    found: list[list[str]] = []
    for group in groups:
        for member in sorted(group):
            cycle = _way_round(member, group, graph)[:-1]
            first = cycle.index(min(cycle))
            cycle = cycle[first:] + cycle[:first]
            if [*cycle, cycle[0]] not in found:
                found.append([*cycle, cycle[0]])
    return found


def _way_round(start: str, group: set[str], graph: dict[str, set[str]]) -> list[str]:
    """The shortest path from `start` back to itself inside `group` (breadth first)."""
    paths = [[start]]
    while paths:
        path = paths.pop(0)
        for nxt in sorted(graph[path[-1]] & group):
            if nxt == start:
                return [*path, start]
            if nxt not in path:
                paths.append([*path, nxt])
    raise AssertionError(f"{sorted(group)} is strongly connected but has no way round from {start}")


def describe(cycle: list[str], edges: dict[tuple[str, str], list[Import]]) -> str:
    """A cycle and, for each step of it, the first import that makes it."""
    steps = [f"  {a} -> {b}: {edges[a, b][0]}" for a, b in zip(cycle, cycle[1:], strict=False)]
    return " -> ".join(cycle) + "\n" + "\n".join(steps)


def private_reaches(root: Path, allowed: dict[tuple[str, str], str]) -> list[Import]:
    """Imports of another package's `_private` module (`paidtwice.lab._lab`) rather than its face, but for
    those `allowed`. The top-level leaves (`_words`, `_exceptions`) are modules of their own: not counted."""
    found = []
    for imported in _imports(root):
        head, *rest = imported.module.split(".")
        if head != root.name or _node(root, imported.source.parts) == _node(root, tuple(rest[:1])):
            continue
        if any(part.startswith("_") for part in rest[1:]):
            if (imported.source.as_posix(), imported.module) not in allowed:
                found.append(imported)
    return found


def click_outside_cli(root: Path) -> list[Import]:
    return [
        found
        for found in _imports(root)
        if found.module.split(".")[0] == "click" and found.source.parts[0] != "cli"
    ]


def long_modules(root: Path) -> list[tuple[Path, int]]:
    sizes = ((path.relative_to(root), len(path.read_text().splitlines())) for path in root.rglob("*.py"))
    return sorted((rel, n) for rel, n in sizes if n >= MAX_LINES)


def long_docstrings(root: Path) -> list[tuple[Path, int]]:
    """Modules whose docstring, quotes included, runs over `MAX_DOCSTRING_LINES` lines."""
    found = []
    for path in sorted(root.rglob("*.py")):
        body = ast.parse(path.read_text(), str(path)).body
        first = body[0] if body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
            if isinstance(first.value.value, str) and first.end_lineno is not None:
                lines = first.end_lineno - first.lineno + 1
                if lines > MAX_DOCSTRING_LINES:
                    found.append((path.relative_to(root), lines))
    return found


def test_click_is_imported_only_under_cli() -> None:
    outside = click_outside_cli(SOURCE)
    assert not outside, (
        "click outside cli/ (the library must know nothing of the command line):\n"
        + "\n".join(map(str, outside))
    )


def test_no_cycle_between_packages() -> None:
    edges = package_graph(SOURCE)
    assert edges, "no import between paidtwice's packages was read: the reader is broken"
    found = cycles(edges)
    assert not found, "packages that import each other:\n" + "\n".join(describe(c, edges) for c in found)


def test_packages_import_each_other_through_their_faces() -> None:
    reaching = private_reaches(SOURCE, PRIVATE_ALLOWED)
    assert not reaching, (
        "imports of another package's private module (import its face, the package, and export the name "
        "there; or allow it in PRIVATE_ALLOWED with the reason):\n" + "\n".join(map(str, reaching))
    )


def test_no_module_is_too_long() -> None:
    long = long_modules(SOURCE)
    assert not long, f"modules of {MAX_LINES} lines or more: " + ", ".join(f"{p} ({n})" for p, n in long)


def test_module_docstrings_are_short() -> None:
    long = long_docstrings(SOURCE)
    assert not long, (
        f"module docstrings over {MAX_DOCSTRING_LINES} lines (say why; reference detail goes to docs/): "
        + ", ".join(f"{p} ({n})" for p, n in long)
    )


@pytest.fixture
def tangled(tmp_path: Path) -> Path:
    """A package in which every rule is broken once."""
    root = tmp_path / "paidtwice"
    files = {
        "__init__.py": "from paidtwice.lab import Lab\n",
        "_words.py": "",
        "lab/__init__.py": "from paidtwice.lab._run import Lab\n",
        "lab/_run.py": "import click\n\ndef f():\n    from paidtwice.report._text import table\n",
        "report/__init__.py": "",
        "report/_text.py": "from .. import _words\nfrom ..engine._sql import Sql\n",
        "engine/__init__.py": "",
        "engine/_sql.py": "from paidtwice.lab import Lab\n" + "\n" * MAX_LINES,
        "report/_long.py": '"""Why.' + "\n" * MAX_DOCSTRING_LINES + '"""\nX = 1\n"""A later string."""\n',
        "cli/__init__.py": "import click\nimport paidtwice\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_checks_see_what_they_check(tangled: Path) -> None:
    edges = package_graph(tangled)
    # Relative imports count, the top-level leaf is a node of its own, the face may import a package.
    assert set(edges) == {
        (FACE, "lab"),
        ("lab", "report"),
        ("report", "_words"),
        ("report", "engine"),
        ("engine", "lab"),
        ("cli", FACE),
    }
    # The function-local import closes the cycle; the path says which import makes each step.
    [cycle] = cycles(edges)
    assert cycle == ["engine", "lab", "report", "engine"]
    assert "lab -> report: lab/_run.py:4 imports paidtwice.report._text" in describe(cycle, edges)
    assert [str(i) for i in click_outside_cli(tangled)] == ["lab/_run.py:1 imports click"]
    # A package reaching into another's private module, but not into its own, nor through a face.
    reaching = [
        "lab/_run.py:4 imports paidtwice.report._text",
        "report/_text.py:2 imports paidtwice.engine._sql",
    ]
    assert [str(i) for i in private_reaches(tangled, {})] == reaching
    allowed = {("report/_text.py", "paidtwice.engine._sql"): "a reason"}
    assert [str(i) for i in private_reaches(tangled, allowed)] == reaching[:1]
    (tangled / "cli" / "_by_name.py").write_text("from paidtwice.lab import Lab, _run\n")
    assert [str(i) for i in private_reaches(tangled, allowed)] == [
        "cli/_by_name.py:1 imports paidtwice.lab._run",
        *reaching[:1],
    ]
    (tangled / "cli" / "_by_name.py").unlink()
    assert long_modules(tangled) == [(Path("engine/_sql.py"), MAX_LINES + 1)]
    # One line over: the docstring with its quotes, not a string further down.
    assert long_docstrings(tangled) == [(Path("report/_long.py"), MAX_DOCSTRING_LINES + 1)]
    # A package importing the face back is a cycle through it.
    (tangled / "lab" / "_back.py").write_text("from paidtwice import testing\n")
    assert cycles(package_graph(tangled)) == [cycle, ["lab", FACE, "lab"]]
