#!/usr/bin/env bash
# Set up, then run the checks and the tests (they start real restate-servers on loopback ports).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check .
.venv/bin/mypy
exec .venv/bin/pytest "$@"
