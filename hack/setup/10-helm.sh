#!/usr/bin/env bash
# Install the real Helm binary into .venv/bin (tau cluster and tests/charts run it).
# Built once from the Go module proxy (helm.sh/helm/v4) and cached by version under
# ${XDG_CACHE_HOME:-$HOME/.cache}/taugrid/helm/<version>; later runs only copy the cached binary.
# Fails loudly: a chart suite without helm must not silently skip.
set -euo pipefail
cd "$(dirname "$0")/../.."

HELM_VERSION="${TAU_HELM_VERSION:-v4.3.1}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/taugrid/helm/${HELM_VERSION}"
TARGET=".venv/bin/helm"

if [ -x "$TARGET" ] && "$TARGET" version --short 2>/dev/null | grep -q "^${HELM_VERSION}"; then
  exit 0
fi

if [ ! -x "$CACHE/helm" ]; then
  command -v go >/dev/null || { echo "10-helm.sh: Go toolchain not found; it builds helm ${HELM_VERSION}" >&2; exit 1; }
  major="${HELM_VERSION%%.*}"
  echo "10-helm.sh: building helm ${HELM_VERSION} from helm.sh/helm/${major} (one-time, cached)"
  mkdir -p "$CACHE.tmp"
  # -ldflags stamps the version helm reports (otherwise "v4.x-dev" style output).
  GOBIN="$CACHE.tmp" GOFLAGS=-buildvcs=false CGO_ENABLED=0 \
    go install -ldflags "-s -w -X helm.sh/helm/${major}/internal/version.version=${HELM_VERSION}" \
    "helm.sh/helm/${major}/cmd/helm@${HELM_VERSION}" \
    || { echo "10-helm.sh: go install helm.sh/helm/${major}/cmd/helm@${HELM_VERSION} failed" >&2; exit 1; }
  mv "$CACHE.tmp/helm" "$CACHE/helm" 2>/dev/null || { mkdir -p "$CACHE"; mv "$CACHE.tmp/helm" "$CACHE/helm"; }
  rm -rf "$CACHE.tmp"
fi

mkdir -p .venv/bin
install -m 0755 "$CACHE/helm" "$TARGET"
"$TARGET" version --short >/dev/null || { echo "10-helm.sh: installed helm does not run" >&2; exit 1; }
