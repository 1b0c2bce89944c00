#!/usr/bin/env bash
# Set up, then run the checks and the tests (they start real restate-servers on loopback ports).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# The HTML report's browser test needs Chromium (Debian's package). Installed where this script may install
# packages (as root, with apt-get: CI); elsewhere the test says why it is skipped.
if ! command -v chromium > /dev/null && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    echo "installing chromium for the HTML report's browser test" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium > /dev/null; } \
        || echo "could not install chromium; the browser tests will be skipped" >&2
fi
# watch's tests check the shipped alert rules with promtool and scrape /metrics with a real Prometheus: both
# are in Debian's prometheus package, installed the same way (the tests skip with the reason without it).
if ! command -v promtool > /dev/null && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    echo "installing prometheus for watch's alert-rule and scrape tests" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus > /dev/null; } \
        || echo "could not install prometheus; watch's rule and scrape tests will be skipped" >&2
fi
.venv/bin/ruff check .
.venv/bin/mypy
# --quick: the quick tier (tests/tiers.py: the pure logic and one real-server smoke per command). The test files
# run on PAIDTWICE_TEST_WORKERS workers (default 3), a file's tests on one worker, so a file's servers and sweeps
# are made once (the files sharing the deck's run go to one worker together: tests/tiers.py's SHARED_FILES). A
# busy worker uses 0.25 to 0.41 of a core (the tests mostly wait on real servers), so 4 workers finish sooner
# (about 2,750 worker-seconds); two whole runs with 4 beside other engineers' load each had failures from load
# and port races still being fixed, so 3 stays the default until 4 has passed whole.
args=()
for arg in "$@"; do
    if [ "$arg" = --quick ]; then args+=(-m quick); else args+=("$arg"); fi
done
exec .venv/bin/pytest -n "${PAIDTWICE_TEST_WORKERS:-3}" --dist loadfile "${args[@]}"
