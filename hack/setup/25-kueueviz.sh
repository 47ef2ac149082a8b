#!/usr/bin/env bash
# Kueue's KueueViz frontend (React + Vite), built for the Portal's /kueueviz/ path from the
# sigs.k8s.io/kueue module of the Kueue version the local cluster runs (its go.mod pin), with
# the lockfile's exact npm dependencies. The Portal image carries the bundle (hack/images) and
# the Portal serves it with its own implementation of the KueueViz backend contract.
# Cached by version under ${XDG_CACHE_HOME:-$HOME/.cache}/taugrid/kueueviz/<version>/: the
# bundle is rebuilt only when the version or this recipe (hack/kueueviz/*) changes, and npm ci
# runs only when the lockfile does. Warm, it is a hash check. Serialised by a lock, since the
# image build may run it beside the set-up loop. Prints the bundle directory on stdout (all
# progress goes to stderr). Fails loudly.
set -euo pipefail
cd "$(dirname "$0")/../.."

GO_MOD=hack/localcluster/modules/kueue/go.mod
VERSION="$(awk '$1 == "sigs.k8s.io/kueue" { print $2 }' "$GO_MOD")"
[ -n "$VERSION" ] || { echo "25-kueueviz.sh: $GO_MOD does not pin sigs.k8s.io/kueue" >&2; exit 1; }
BASE=/kueueviz/
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/taugrid/kueueviz/${VERSION}"
RECIPE="$( (echo "$VERSION $BASE"; cat hack/setup/25-kueueviz.sh hack/kueueviz/*) | sha256sum | cut -d' ' -f1)"

current() { [ "$(cat "$CACHE/bundle/.recipe" 2>/dev/null)" = "$RECIPE" ]; }
done_() { echo "$CACHE/bundle"; exit 0; }
current && done_

for tool in go node npm; do
  command -v "$tool" >/dev/null || { echo "25-kueueviz.sh: $tool not found; it builds KueueViz ${VERSION} (owner: developer machine)" >&2; exit 1; }
done
mkdir -p "$CACHE"
exec 9>"$CACHE.lock"
flock 9
current && done_

started=$SECONDS
echo "25-kueueviz.sh: building the KueueViz ${VERSION} frontend (cached)" >&2
module="$(GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/kueue@${VERSION}" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("Dir", ""))')" \
  || { echo "25-kueueviz.sh: go mod download sigs.k8s.io/kueue@${VERSION} failed" >&2; exit 1; }
upstream="$module/cmd/kueueviz/frontend"
[ -f "$upstream/package-lock.json" ] || { echo "25-kueueviz.sh: $upstream has no package-lock.json" >&2; exit 1; }

work="$CACHE/frontend"
lock_hash="$(sha256sum "$upstream/package-lock.json" | cut -d' ' -f1)"
if [ "$(cat "$work/.npm-ci" 2>/dev/null)" != "$lock_hash" ]; then
  rm -rf "$work"
  mkdir -p "$work"
  cp -R "$upstream/." "$work/"
  chmod -R u+w "$work"
  # --ignore-scripts: no dependency's install hook runs; the build needs none of them.
  (cd "$work" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2) \
    || { echo "25-kueueviz.sh: npm ci of KueueViz ${VERSION} failed (see above)" >&2; exit 1; }
  echo "$lock_hash" >"$work/.npm-ci"
fi
rm -rf "$work/taugrid" "$work/src" "$work/public" "$work/index.html"
cp -R "$upstream/src" "$upstream/public" "$upstream/index.html" "$work/"
chmod -R u+w "$work"
mkdir -p "$work/taugrid"
cp hack/kueueviz/vite.config.mjs hack/kueueviz/router.js "$work/taugrid/"
sed "s|__KUEUEVIZ_BASE__|$BASE|" hack/kueueviz/env.js >"$work/public/env.js"

rm -rf "$CACHE/bundle.tmp"
(cd "$work" && KUEUEVIZ_BASE="$BASE" ./node_modules/.bin/vite build --logLevel warn \
  --config taugrid/vite.config.mjs --outDir "$CACHE/bundle.tmp" >&2) \
  || { echo "25-kueueviz.sh: vite build of KueueViz ${VERSION} failed (see above)" >&2; exit 1; }
[ -f "$CACHE/bundle.tmp/index.html" ] || { echo "25-kueueviz.sh: vite build wrote no index.html" >&2; exit 1; }
echo "$VERSION" >"$CACHE/bundle.tmp/.version"
echo "$RECIPE" >"$CACHE/bundle.tmp/.recipe"
rm -rf "$CACHE/bundle"
mv "$CACHE/bundle.tmp" "$CACHE/bundle"
echo "25-kueueviz.sh: KueueViz ${VERSION} bundle built in $((SECONDS - started))s" >&2
done_
