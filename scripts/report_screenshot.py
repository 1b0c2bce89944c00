"""Make docs/report-deck.png, the README's picture of a deck report, from the captured deck results.

.venv/bin/python scripts/report_screenshot.py   (needs chromium)
"""

from __future__ import annotations

import base64
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from browser import Browser, find_chromium  # noqa: E402

from paidtwice.report import deck_sections, load_results, write_html  # noqa: E402

# The top of the page down to the end of the first run's timeline.
LAST = "#run-naive_kill_in_pause"


def main() -> None:
    binary = find_chromium()
    if binary is None:
        sys.exit("chromium is not installed")
    records = load_results([ROOT / "tests" / "fixtures" / "results" / "deck.json"]).records
    with tempfile.TemporaryDirectory() as tmp, Browser(binary) as browser:
        page = write_html(Path(tmp) / "deck.html", "paidtwice report: deck", deck_sections(records))
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
    out = ROOT / "docs" / "report-deck.png"
    out.write_bytes(base64.b64decode(shot["data"]))
    print(out)


if __name__ == "__main__":
    main()
