"""Make docs/report-deck.png, the README's picture of a deck report, from the captured deck results.

.venv/bin/python scripts/report_screenshot.py   (needs chromium)

The PNG carries a digest of the page it shows (without the time it was made): tests/test_report.py fails
when the page the captured results make today differs, that is when the picture is out of date.
"""

from __future__ import annotations

import base64
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from browser import README_PICTURE, Browser, find_chromium, page_digest, tag_png  # noqa: E402

from paidtwice.report import deck_sections, load_results, write_html  # noqa: E402

DECK = ROOT / "tests" / "fixtures" / "results" / "deck.json"
TITLE = "paidtwice report: deck"

# The top of the page down to the end of the first run's timeline.
LAST = "#run-naive_kill_in_pause"


def readme_page(directory: Path) -> Path:
    """The page the README's picture shows, written in `directory`."""
    return write_html(directory / "deck.html", TITLE, deck_sections(load_results([DECK]).records))


def main() -> None:
    binary = find_chromium()
    if binary is None:
        sys.exit("chromium is not installed")
    with tempfile.TemporaryDirectory() as tmp, Browser(binary) as browser:
        page = readme_page(Path(tmp))
        digest = page_digest(page.read_text())
        browser.open(page)
        browser.call(
            "Emulation.setDeviceMetricsOverride", width=1100, height=900, deviceScaleFactor=1, mobile=False
        )
        bottom = browser.evaluate(
            f"document.querySelector('{LAST}').getBoundingClientRect().bottom + scrollY"
        )
        shot = browser.call(
            "Page.captureScreenshot",
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": 1100, "height": bottom + 8, "scale": 0.8},
        )
    README_PICTURE.write_bytes(tag_png(base64.b64decode(shot["data"]), digest))
    print(README_PICTURE)


if __name__ == "__main__":
    main()
