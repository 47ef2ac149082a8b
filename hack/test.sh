#!/usr/bin/env bash
# Install everything TauGrid needs from scratch into .venv and run every test suite.
# Usage: hack/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[all,test]'

export PATH="$PWD/.venv/bin:$PATH"
# This checkout's images (hack/images: Debian packages and PyPI wheels, mostly downloads and
# unpacking) build in the background while the Go builds of the set-up below take the CPU, so a
# cold machine pays for the longer of the two rather than their sum; warm, it is a cache check.
# The tests' local_images fixture then only pushes them.
hack/setup/05-image-tools.sh
images_log="$(mktemp)"
python -m hack.images build >"$images_log" 2>&1 &
images=$!
trap 'kill "$images" "${typecheck:-}" 2>/dev/null || true' EXIT
# Real parts the suites need (helm, Chromium, the local control plane): each script is
# idempotent, caches outside the repository and fails loudly if its part cannot be installed.
for setup in hack/setup/*.sh; do
  [ -e "$setup" ] || continue
  echo "== $setup"
  "$setup"
done
echo "== python -m hack.images build"
if ! wait "$images"; then
  cat "$images_log" >&2
  echo "hack/test.sh: building this checkout's images failed; the build logs are under \${XDG_CACHE_HOME:-\$HOME/.cache}/taugrid/images/logs" >&2
  exit 1
fi
cat "$images_log"
rm -f "$images_log"
ruff check .
# The type check (about a minute of one core) runs beside the tests, whose cluster units mostly
# wait on pods; its verdict is printed after them and fails the command the same way.
mypy_log="$(mktemp)"
mypy >"$mypy_log" 2>&1 &
typecheck=$!
# Three workers: the suites that need a local cluster form two units, each on its own worker
# with its own cluster, and everything else runs on the third (scheduled in tests/conftest.py);
# the slowest tests are listed at the end. TAU_TEST_WORKERS=0 runs everything in one process.
status=0
pytest -n "${TAU_TEST_WORKERS:-3}" --durations=40 "$@" || status=$?
echo "== mypy"
wait "$typecheck" || status=1
cat "$mypy_log"
rm -f "$mypy_log"
exit "$status"
