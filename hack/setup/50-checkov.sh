#!/usr/bin/env bash
# Checkov, the policy linter tests/charts runs over the rendered chart.
# Installed from PyPI into its own virtualenv (its pins would fight the project's own
# dependencies), cached by version under ${XDG_CACHE_HOME:-$HOME/.cache}/taugrid/checkov/<version>,
# with a launcher in .venv/bin. Idempotent; fails loudly, so the policy suite never skips.
set -euo pipefail
cd "$(dirname "$0")/../.."

CHECKOV_VERSION="${TAU_CHECKOV_VERSION:-3.3.30}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/taugrid/checkov/${CHECKOV_VERSION}"
TARGET=".venv/bin/checkov"

# A venv cannot be moved (its scripts name its path), so completeness is a marker written last.
if [ ! -e "$CACHE/installed" ]; then
  echo "50-checkov.sh: installing checkov ${CHECKOV_VERSION} from PyPI (one-time, cached)"
  rm -rf "$CACHE"
  mkdir -p "$CACHE"
  python3 -m venv "$CACHE/venv"
  "$CACHE/venv/bin/python" -m pip install --quiet "checkov==${CHECKOV_VERSION}" \
    || { echo "50-checkov.sh: pip install checkov==${CHECKOV_VERSION} failed" >&2; exit 1; }
  touch "$CACHE/installed"
fi

mkdir -p .venv/bin
printf '#!/bin/sh\nexec "%s/venv/bin/checkov" "$@"\n' "$CACHE" > "$TARGET.tmp"
chmod 0755 "$TARGET.tmp"
mv "$TARGET.tmp" "$TARGET"
"$TARGET" --version >/dev/null || { echo "50-checkov.sh: installed checkov does not run" >&2; exit 1; }
