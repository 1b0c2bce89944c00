#!/usr/bin/env bash
# Capture the result files the report tests read (tests/fixtures/results/), from real runs of the lab. Run by
# hand to refresh them; each file is exactly what `--json` wrote.
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/fixtures/results
mkdir -p "$out"
rows=(naive-kill-in-pause journaled-kill-mid-call naive-changed-for-good restart-delay-curve recover-paused)
.venv/bin/paidtwice deck "${rows[@]/#/--only=}" --json "$out/deck.json" > /dev/null
.venv/bin/paidtwice sweep --script steady --json "$out/sweep.json" > /dev/null
rm -f "$out"/*.svg  # the deck's curve plot; the report draws its own
ls -l "$out"
