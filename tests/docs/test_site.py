"""The docs site builds with `mkdocs build --strict`; its command reference names every command and option.

The site is built once per session into a temporary directory (skipped, with the reason, where the `docs`
extra is not installed). The reference is generated from the click commands by mkdocs-click; these tests
read the built page, so a command or an option the generation left out, or a page that stopped including
it, fails here.
"""

from __future__ import annotations

import html
import importlib.util
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from support import DEADLINE

from paidtwice.cli import cli

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocs_click") is None:
        pytest.skip("mkdocs is not installed: pip install -e '.[docs]' (scripts/setup.sh does)")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        env={"NO_MKDOCS_2_WARNING": "1", **__import__("os").environ},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def commands() -> Iterator[tuple[str, click.Command]]:
    group = cli
    assert isinstance(group, click.Group)
    yield from sorted(group.commands.items())


def command_sections(page: str) -> dict[str, str]:
    """The command reference's HTML, by command: from each command's heading to the next one."""
    headings = list(re.finditer(r'<h[23] id="paidtwice(?:-([a-z0-9-]+))?"', page))
    sections = {}
    for i, heading in enumerate(headings):
        end = headings[i + 1].start() if i + 1 < len(headings) else len(page)
        sections[heading.group(1) or ""] = page[heading.start() : end]
    return sections


def missing_reference_lines(page: str) -> list[str]:
    """Every command or option of the click tree that the command reference page has no line for."""
    sections = command_sections(page)
    missing = []
    for name, command in commands():
        section = sections.get(name)
        if section is None:
            missing.append(f"paidtwice {name}")
            continue
        first_cells = re.findall(r"<tr>\s*<td>(.*?)</td>", section, flags=re.S)
        names = {html.unescape(n) for cell in first_cells for n in re.findall(r"<code>(.*?)</code>", cell)}
        for param in command.params:
            if not isinstance(param, click.Option) or param.hidden:
                continue
            for opt in [*param.opts, *param.secondary_opts]:
                if opt not in names:
                    missing.append(f"paidtwice {name} {opt}")
    return missing


def test_the_site_builds_strict(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "reference" / "cli" / "index.html").is_file()


def test_the_site_names_every_command(site: Path) -> None:
    text = "".join(p.read_text() for p in site.rglob("*.html"))
    absent = [name for name, _ in commands() if f"paidtwice {name}" not in text]
    assert absent == [], f"the site never names: {absent}"


def test_every_command_and_option_has_its_reference_line(site: Path) -> None:
    page = (site / "reference" / "cli" / "index.html").read_text()
    assert missing_reference_lines(page) == []


def test_an_option_without_a_reference_line_is_found(site: Path) -> None:
    """The check above can fail: the page with one option's row taken out, and one command's section."""
    page = (site / "reference" / "cli" / "index.html").read_text()
    without_row = re.sub(r"<tr>\s*<td><code>--check</code>.*?</tr>", "", page, count=1, flags=re.S)
    assert without_row != page
    # The first --check row on the page (report's, sweep's, ...): whichever it was is found missing.
    missing = missing_reference_lines(without_row)
    assert len(missing) == 1 and missing[0].endswith(" --check"), missing
    without_section = page.replace('id="paidtwice-soak"', 'id="elsewhere"')
    assert "paidtwice soak" in missing_reference_lines(without_section)


def test_an_option_added_to_a_command_has_no_reference_line_until_the_site_is_built(site: Path) -> None:
    page = (site / "reference" / "cli" / "index.html").read_text()
    sweep = cli.commands["sweep"]  # type: ignore[attr-defined]
    added = click.Option(["--brand-new-option"], help="Not in the built reference.")
    sweep.params.append(added)
    try:
        assert missing_reference_lines(page) == ["paidtwice sweep --brand-new-option"]
    finally:
        sweep.params.remove(added)


def test_the_readme_is_short_and_keeps_the_two_commands() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    assert "bash scripts/deck.sh" in text and "bash scripts/test.sh" in text
    assert "docs/report-deck.png" in text
    assert "mkdocs build --strict" in text


def test_every_link_of_the_readme_leads_to_a_file() -> None:
    """The README is read on the forge, outside the site: its relative links name files of the repository."""
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text())
    relative = [t for t in targets if "://" not in t]
    assert relative, "the README links to no page of the docs"
    assert [t for t in relative if not (ROOT / t).exists()] == []
