#!/usr/bin/env bash
# Fresh machine -> the quickstart example run end to end on the local engine:
# install tau (with the experiment store) into .venv, run examples/quickstart's `train`
# target with `tau run train --local`, show its status and outputs, and summarise the
# evidence it left in the local experiment store. Needs only python3 (3.11+) and git.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

python3 - <<'PY' || { echo "error: hack/quickstart.sh needs Python 3.11 or newer as python3" >&2; exit 1; }
import sys
sys.exit(0 if sys.version_info >= (3, 11) else 1)
PY

if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv"
  python3 -m venv .venv
fi
echo "==> installing tau and taugrid-portal into .venv"
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[portal]'

tau="$repo/.venv/bin/tau"
portal="$repo/.venv/bin/taugrid-portal"
"$tau" version

cd examples/quickstart
echo
echo "==> tau run validate train"
"$tau" run validate train

echo
echo "==> tau run train --local"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$tau" run train --local 2> >(tee "$log" >&2)
name=$(sed -n 's/^local run \([^ ]*\) started .*/\1/p' "$log" | head -n 1)
store=$(sed -n 's/^evidence: run [^ ]* in experiment store //p' "$log" | head -n 1)
if [ -z "$name" ] || [ -z "$store" ]; then
  echo "error: could not find the run name or evidence store in tau's output" >&2
  exit 1
fi

echo
echo "==> tau run status $name"
"$tau" run status "$name"

echo
echo "==> tau run get $name"
"$tau" run get "$name"

echo
echo "==> evidence: taugrid-portal experiment --store $store search -q toy-regression"
"$portal" experiment --store "$store" search -q toy-regression
html="$(dirname "$store")/toy-regression.stellar.html"
"$portal" experiment --store "$store" stellar toy-regression -o html --out "$html"

cat <<DONE

Done. The quickstart ran on this machine with the same environment contract it gets on a cluster.
  run record:        tau run status $name   (tau run list --local)
  outputs:           tau run get $name
  experiment store:  $store
  dashboard file:    $html
  browse it:         $portal experiment --store $store serve --default-target toy-regression
The same target renders for a cluster unchanged: (cd examples/quickstart && $tau run train --dry-run=client)
DONE
