#!/usr/bin/env bash
# Install everything the test suite needs, then lint and run every test.
# Usage: bash scripts/test.sh [extra pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages, each only when its program is missing:
#   chromium      headless browser for the browser tests (Playwright drives it, never downloads one)
#   poppler-utils pdftoppm and pdffonts, to render and inspect the figures' PDF
#   texlive-latex-base, texlive-latex-recommended  pdflatex and booktabs, to compile the LaTeX tables
#                 (about 40 s to install)
PACKAGES=()
command -v chromium >/dev/null 2>&1 || PACKAGES+=(chromium)
command -v pdftoppm >/dev/null 2>&1 || PACKAGES+=(poppler-utils)
command -v pdflatex >/dev/null 2>&1 || PACKAGES+=(texlive-latex-base texlive-latex-recommended)
if [ "${#PACKAGES[@]}" -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${PACKAGES[@]}" >/dev/null
fi

python3 -m pip install -q --disable-pip-version-check -e ".[test]"
python3 -m ruff check .
python3 -m pytest -q -p no:cacheprovider "$@"
