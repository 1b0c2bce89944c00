"""Make the docs' pictures and outputs from the captured deck results (tests/fixtures/results/deck.json).

.venv/bin/python scripts/report_screenshot.py            (the pictures need chromium)
.venv/bin/python scripts/report_screenshot.py --text     (only the terminal outputs; no browser)

- docs/report-deck.png: the README's picture of a deck report, the top of the page down to the first
  run's timeline;
- docs/tutorial/img/timeline-RUN.png: every run's timeline in that page, for the deck's tutorial;
- docs/tutorial/output/RUN.txt: what `paidtwice run RUN` prints for each captured record, which the
  tutorial includes.

Each PNG carries a digest of the page it shows (without the time it was made): tests/report/test_report.py and
tests/docs/ fail when the page the captured results make today differs, that is when a picture is out of
date; tests/docs/ also fails when an output differs from what the report prints today.
"""

from __future__ import annotations

import base64
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from browser import README_PICTURE, Browser, find_chromium, page_digest, tag_png  # noqa: E402

from paidtwice.report import (  # noqa: E402
    deck_sections,
    format_curve,
    format_run,
    format_walk,
    load_results,
    write_html,
)
from paidtwice.results import CurveRecord, RecoveryRecord, RunRecord  # noqa: E402

DECK = ROOT / "tests" / "fixtures" / "results" / "deck.json"
TITLE = "paidtwice report: deck"
TUTORIAL = ROOT / "docs" / "tutorial"
TIMELINES = TUTORIAL / "img"
OUTPUTS = TUTORIAL / "output"

# The top of the page down to the end of the first run's timeline.
LAST = "#run-naive_kill_in_pause"
WIDTH = 1100


def readme_page(directory: Path) -> Path:
    """The page the README's picture (and the tutorial's timelines) show, written in `directory`."""
    return write_html(directory / "deck.html", TITLE, deck_sections(load_results([DECK]).records))


def timeline_picture(timeline_id: str) -> Path:
    """Where the tutorial's picture of the timeline with this id in the page goes."""
    return TIMELINES / f"timeline-{timeline_id.removeprefix('run-').replace('_', '-')}.png"


def outputs() -> dict[Path, str]:
    """What the terminal prints for each captured record, by the file the tutorial includes."""
    texts: dict[Path, str] = {}
    for record in load_results([DECK]).records:
        if isinstance(record, RunRecord):
            text = format_run(record)
        elif isinstance(record, CurveRecord):
            text = format_curve(record)
        elif isinstance(record, RecoveryRecord):
            text = format_walk(record)
        else:
            continue
        texts[OUTPUTS / f"{record.name}.txt"] = text.rstrip("\n") + "\n"
    return texts


def _write_outputs() -> None:
    OUTPUTS.mkdir(parents=True, exist_ok=True)
    for path, text in outputs().items():
        path.write_text(text)
        print(path)


def _shoot(browser: Browser, clip: dict[str, float], digest: str, path: Path) -> None:
    shot = browser.call("Page.captureScreenshot", format="png", captureBeyondViewport=True, clip=clip)
    path.write_bytes(tag_png(base64.b64decode(shot["data"]), digest))
    print(path)


def main() -> None:
    _write_outputs()
    if sys.argv[1:] == ["--text"]:
        return
    binary = find_chromium()
    if binary is None:
        sys.exit("chromium is not installed")
    TIMELINES.mkdir(parents=True, exist_ok=True)
    for old in TIMELINES.glob("timeline-*.png"):
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp, Browser(binary) as browser:
        page = readme_page(Path(tmp))
        digest = page_digest(page.read_text())
        browser.open(page)
        browser.call(
            "Emulation.setDeviceMetricsOverride", width=WIDTH, height=900, deviceScaleFactor=1, mobile=False
        )
        bottom = browser.evaluate(
            f"document.querySelector('{LAST}').getBoundingClientRect().bottom + scrollY"
        )
        clip = {"x": 0, "y": 0, "width": WIDTH, "height": bottom + 8, "scale": 0.8}
        _shoot(browser, clip, digest, README_PICTURE)
        boxes = browser.evaluate(
            "JSON.stringify([...document.querySelectorAll('svg.timeline')].map(e => {"
            " const r = e.getBoundingClientRect();"
            " return [e.id, r.left + scrollX, r.top + scrollY, r.width, r.height]; }))"
        )
        for timeline_id, x, y, width, height in json.loads(boxes):
            left, top = max(x - 8, 0), max(y - 8, 0)
            clip = {"x": left, "y": top, "width": width + 16, "height": height + 16, "scale": 1}
            _shoot(browser, clip, digest, timeline_picture(timeline_id))


if __name__ == "__main__":
    main()
