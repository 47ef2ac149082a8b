#!/usr/bin/env bash
# Install everything TauGrid needs from scratch into .venv and run every test suite.
# Usage: hack/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[all,test]'

export PATH="$PWD/.venv/bin:$PATH"
ruff check .
pytest "$@"
