#!/usr/bin/env bash
# Install everything TauGrid needs from scratch into .venv and run every test suite.
# Usage: hack/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[all,test]'

export PATH="$PWD/.venv/bin:$PATH"
# Real parts the suites need (helm, Chromium, the local control plane): each script is
# idempotent, caches outside the repository and fails loudly if its part cannot be installed.
for setup in hack/setup/*.sh; do
  [ -e "$setup" ] || continue
  echo "== $setup"
  "$setup"
done
ruff check .
mypy
# Three workers: the suites that need a local cluster form two units, each on its own worker
# with its own cluster, and everything else runs on the third (scheduled in tests/conftest.py);
# the slowest tests are listed at the end. TAU_TEST_WORKERS=0 runs everything in one process.
pytest -n "${TAU_TEST_WORKERS:-3}" --durations=40 "$@"
