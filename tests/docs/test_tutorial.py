"""The deck tutorial's outputs and pictures are what the captured deck makes today.

scripts/report_screenshot.py writes what `paidtwice run` prints for each captured record
(docs/tutorial/output/) and a picture of every run's timeline in the HTML report (docs/tutorial/img/),
each picture tagged with a digest of the page it shows.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

from browser import page_digest, png_page_digest

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial" / "deck.md"
REMAKE = "run .venv/bin/python scripts/report_screenshot.py"


def screenshots() -> ModuleType:
    script = ROOT / "scripts" / "report_screenshot.py"
    spec = importlib.util.spec_from_file_location("report_screenshot", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_outputs_are_what_the_report_prints_today() -> None:
    module = screenshots()
    for path, text in module.outputs().items():
        assert path.exists() and path.read_text() == text, f"{path.name} is out of date: {REMAKE} --text"


def test_every_timeline_of_the_page_has_its_current_picture(tmp_path: Path) -> None:
    module = screenshots()
    page = module.readme_page(tmp_path).read_text()
    digest = page_digest(page)
    ids = re.findall(r'<svg class="timeline" id="([^"]+)"', page)
    assert ids
    expected = {module.timeline_picture(i) for i in ids}
    assert set(module.TIMELINES.glob("timeline-*.png")) == expected, REMAKE
    for picture in expected:
        shown = png_page_digest(picture.read_bytes())
        assert shown == digest, f"{picture.name} shows an older page: {REMAKE}"


def test_the_tutorial_shows_pictures_and_outputs_that_exist() -> None:
    text = TUTORIAL.read_text()
    pictures = re.findall(r"\]\((img/[^)]+\.png)\)", text)
    outputs = re.findall(r'--8<-- "([^"]+)"', text)
    assert len(pictures) >= 3 and len(outputs) >= 3
    assert [p for p in pictures if not (TUTORIAL.parent / p).exists()] == []
    assert [o for o in outputs if not (ROOT / o).exists()] == []
