#!/usr/bin/env bash
# Set up a fresh clone: a virtualenv at .venv with paidtwice (its test tools, the examples' frameworks, the
# docs site's tools) installed, and the pinned restate-server installed from npm into paidtwice's cache.
# Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev,frameworks,docs]'
binary=$(.venv/bin/paidtwice provision)
echo "setup: .venv ready; restate-server installed at $binary"
# The TypeScript example's packages, pinned by its lockfile, for `paidtwice sweep --cmd` and its tests.
(cd examples/ts_agent && npm ci --no-audit --no-fund --loglevel=error)
echo "setup: examples/ts_agent installed"
# The TypeScript shapes the sweep tests tell apart (Restate's template, naive and journaled), pinned likewise.
(cd tests/sweep/ts_shapes && npm ci --no-audit --no-fund --loglevel=error)
echo "setup: tests/sweep/ts_shapes installed"
# Restate's Vercel AI template on @restatedev/vercel-ai-middleware (durableCalls) and its naive twin, pinned likewise.
(cd tests/sweep/ts_durable && npm ci --no-audit --no-fund --loglevel=error)
echo "setup: tests/sweep/ts_durable installed"
# The TypeScript corpus the tests sweep with nothing but --cmd (the Vercel AI SDK, zod), pinned the same way.
(cd tests/ts_corpus && npm ci --no-audit --no-fund --loglevel=error)
echo "setup: tests/ts_corpus installed"
# The TypeScript conformance corpus (every context method and option of @restatedev/restate-sdk), pinned likewise.
(cd tests/conformance/ts_apps && npm ci --no-audit --no-fund --loglevel=error)
echo "setup: tests/conformance/ts_apps installed"
