"""Capture journal files (paidtwice-journal format) from real deck runs into tests/fixtures/journals/.

Run by hand to refresh them: .venv/bin/python scripts/capture_journals.py
"""

from __future__ import annotations

from pathlib import Path

from paidtwice.lab import EXPERIMENTS, Lab
from paidtwice.replay import capture_journal, save_journal

JOURNALS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "journals"
ROWS = ("clean", "naive-changed-for-good")


def main() -> None:
    with Lab() as lab:
        rows = [(row, None) for row in EXPERIMENTS if row.name in ROWS]
        for record in lab.run_many(rows, concurrent=True):
            journal = capture_journal(lab.sql, record.invocation_id)
            path = save_journal(JOURNALS / f"{record.name}.json", journal)
            print(path, record.service, record.status)


if __name__ == "__main__":
    main()
