#!/usr/bin/env bash
# Set up, then run the deck: every run of the lab deck, deck figures beside measured ones.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/paidtwice deck "$@"
