"""Where a bench writes what it measured for the docs: docs/benchmarks/tables/NAME.md.

The Benchmarks page includes these files (pymdownx snippets), so no figure on it is typed by hand. Each file
is a table (or the bench's printed text) and one line under it: the command that measured it, the date, the
machine and its load average.
A bench rewrites its file every time it runs.
"""

from __future__ import annotations

import datetime
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path

TABLES = Path(__file__).resolve().parent.parent / "docs" / "benchmarks" / "tables"


def machine() -> str:
    """The machine in a few words: cores, CPU model, memory, OS."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        memory = f", {pages * size / 2**30:.0f} GiB"
    except (ValueError, OSError):
        pass
    return f"{os.cpu_count()} cores ({model}){memory}, {platform.system()}"


def load_average() -> str:
    """The 1-minute load average now."""
    return f"{os.getloadavg()[0]:.1f}"


def command() -> str:
    """The command line that ran the bench, as a reader would type it."""
    return " ".join([".venv/bin/python", *sys.argv]).replace(str(Path.cwd()) + "/", "")


def footer(*, load: str, note: str = "") -> str:
    today = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    line = f"Measured by `{command()}` on {today}, on {machine()}, load average {load}."
    return line + (f" {note}" if note else "")


def _write(name: str, body: str, *, load: str, note: str) -> Path:
    TABLES.mkdir(parents=True, exist_ok=True)
    path = TABLES / f"{name}.md"
    path.write_text(body.rstrip("\n") + "\n\n" + footer(load=load, note=note) + "\n")
    return path


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table; a `|` in a cell is escaped."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return "\n".join([line(headers), "|" + "---|" * len(headers), *(line(r) for r in rows)])


def write_table(
    name: str, headers: Sequence[str], rows: Sequence[Sequence[str]], *, load: str, note: str = ""
) -> Path:
    """Write the bench's table for the docs."""
    return _write(name, markdown_table(headers, rows), load=load, note=note)


def write_text(name: str, text: str, *, load: str, note: str = "") -> Path:
    """Write the bench's printed output for the docs, as a text block."""
    return _write(name, "```text\n" + text.rstrip("\n") + "\n```", load=load, note=note)
