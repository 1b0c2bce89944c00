"""Capture the deck agent's clean timelines into tests/fixtures/timelines/ (run by hand to refresh them).

    .venv/bin/python scripts/capture_timeline.py

One clean run of the deck's agent per mode (naive, journaled), under the steady script, as the sweep makes
it before it plans its crash points. For each, `deck-MODE.steps.jsonl` is the host's step log as written and
`deck-MODE.json` the rest of what the planning reads: the invocation, the clean journal's labels, when each
stub tool call began and when the server appended the output. tests/sweep/test_timeline_fixture.py derives
the crash points from them without a server.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

from paidtwice.lab._watch import Watcher

from paidtwice.lab import Lab
from paidtwice.sweep._runs import clean_run
from paidtwice.sweep._sweep import deck_scripts
from paidtwice.targets import DeckTarget

TIMELINES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "timelines"
MODES = ("naive", "journaled")
SCRIPT = "steady"


def main() -> None:
    TIMELINES.mkdir(parents=True, exist_ok=True)
    with Lab() as lab:
        watcher = Watcher(lambda: lab.sql, lab.cancelled)
        try:
            for mode in MODES:
                ((name, script),) = deck_scripts([SCRIPT])
                clean, run = clean_run(
                    lab, threading.Event(), watcher, DeckTarget(mode), script, f"capture_{mode}"
                )
                shutil.copyfile(run.step_log, TIMELINES / f"deck-{mode}.steps.jsonl")
                meta = {
                    "mode": mode,
                    "script": name,
                    "invocation_id": clean.invocation_id,
                    "journal": list(clean.journal),
                    "tool_starts": run.tool_starts(),
                    "ended": run.output_at(),
                }
                (TIMELINES / f"deck-{mode}.json").write_text(json.dumps(meta, indent=2) + "\n")
                print(f"{mode}: {len(clean.journal)} journal entries, {clean.model_calls} model calls")
        finally:
            watcher.stop()


if __name__ == "__main__":
    main()
