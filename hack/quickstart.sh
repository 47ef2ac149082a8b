#!/usr/bin/env bash
# Install tau into .venv and run the quickstart example on the embedded default.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e .

tau="$PWD/.venv/bin/tau"
cd examples/quickstart
"$tau" run validate --config tau/train.yaml
"$tau" run train --dry-run=client
