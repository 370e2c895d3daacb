#!/usr/bin/env bash
# Install everything the test suite needs, then lint and run every test.
# Usage: bash scripts/test.sh [extra pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

# Headless Chromium for the browser tests (Debian package; Playwright drives it, never downloads one).
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

python3 -m pip install -q --disable-pip-version-check -e ".[test]"
python3 -m ruff check .
python3 -m pytest -q -p no:cacheprovider "$@"
