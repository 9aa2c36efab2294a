#!/usr/bin/env bash
# The test command: install everything the tests need on a fresh machine, then run them.
# Usage: bash tests/run.sh [pytest args]    (bench: bash tests/run.sh -m slow)
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
# Browser tests drive Debian's headless Chromium (no browser download is possible here).
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || echo "warning: could not install chromium; browser tests will be skipped" >&2
fi
# Lint and type check first (configured in pyproject.toml); either failing fails the run.
.venv/bin/ruff check kg tests
.venv/bin/mypy kg
exec .venv/bin/python -m pytest "$@"
