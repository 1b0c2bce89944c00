"""The Benchmarks page's tables are the benches' own files (docs/benchmarks/tables/), each saying the
command that measured it, the date, the machine and its load, in the form bench/_docs.py writes."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "docs" / "benchmarks" / "tables"
FOOTER = re.compile(
    r"^Measured by `\.venv/bin/python bench/[a-z_]+\.py[^`]*`.* on \d{4}-\d{2}-\d{2}, on \d+ cores \(.+\)"
    r".*, load average .+$",
    flags=re.M,
)


def writer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_docs", ROOT / "bench" / "_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def included() -> set[Path]:
    pages = "".join(p.read_text() for p in (ROOT / "docs").rglob("*.md"))
    return {ROOT / name for name in re.findall(r'--8<-- "(docs/benchmarks/tables/[^"]+)"', pages)}


@pytest.mark.parametrize("table", sorted(TABLES.glob("*.md")), ids=lambda p: p.stem)
def test_each_table_says_its_command_date_and_machine_and_is_shown(table: Path) -> None:
    assert FOOTER.search(table.read_text()), f"{table.name} does not say how it was measured"
    assert table in included(), f"{table.name} is on no page"


def test_every_table_a_page_includes_exists() -> None:
    assert included() and [p for p in included() if not p.exists()] == []


def test_the_bench_writer_writes_that_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = writer()
    monkeypatch.setattr(module, "TABLES", tmp_path)
    monkeypatch.setattr(module.sys, "argv", ["bench/example.py", "--size", "3"])
    path = module.write_table("example", ["a", "b|c"], [["1", "2"]], load="1.0 to 2.0", note="Two.")
    text = path.read_text()
    assert text.startswith("| a | b\\|c |\n|---|---|\n| 1 | 2 |\n\n")
    assert FOOTER.search(text) and "bench/example.py --size 3" in text and text.rstrip().endswith("Two.")
    block = module.write_text("printed", "line one\nline two", load="3.0").read_text()
    assert block.startswith("```text\nline one\nline two\n```\n\n") and FOOTER.search(block)
