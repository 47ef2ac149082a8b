#!/usr/bin/env bash
# Install the real Pulumi engine into .venv/bin: the `pulumi` CLI and the Kubernetes resource
# provider plugin (`pulumi-resource-kubernetes`), which `python -m infra.automation` and the dev
# stack's e2e run. Both are built once from the Go module proxy and cached by version under
# ${XDG_CACHE_HOME:-$HOME/.cache}/taugrid/pulumi/<version>/; later runs only copy the binaries.
#
# Why built this way (the proxy is the only source here):
# - the CLI's main package (pkg/v3/cmd/pulumi) carries replace directives, so `go install
#   pkg@version` refuses it; a wrapper module that requires pkg/v3 and sdk/v3 builds it instead;
# - the Kubernetes provider is served only as a pseudo-version whose go.mod replaces its SDK with
#   a sibling directory and whose main embeds two files that `go generate` writes; a writable
#   copy of the module drops the replace (the required SDK version comes from the proxy) and
#   generates them.
# - no language plugin is needed: the program runs as an Automation API inline program.
# Fails loudly: the Pulumi e2e must never silently skip.
set -euo pipefail
cd "$(dirname "$0")/../.."

PULUMI_VERSION="${TAU_PULUMI_VERSION:-v3.274.1}"
K8S_PROVIDER_VERSION="${TAU_PULUMI_K8S_PROVIDER_VERSION:-v4.0.0-20260115033456-f47bc2d6f199}"
ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/taugrid/pulumi"
CLI_CACHE="$ROOT/$PULUMI_VERSION"
K8S_CACHE="$ROOT/kubernetes-$K8S_PROVIDER_VERSION"
TARGET_DIR=".venv/bin"

fail() { echo "60-pulumi.sh: $*" >&2; exit 1; }

build_cli() {
  [ -x "$CLI_CACHE/pulumi" ] && return 0
  echo "60-pulumi.sh: building the pulumi CLI ${PULUMI_VERSION} (one-time, cached)"
  local work="$ROOT/.build/cli-$PULUMI_VERSION"
  rm -rf "$work" && mkdir -p "$work"
  cat >"$work/go.mod" <<EOF
module taugrid.invalid/pulumi-cli

go 1.24
EOF
  # The blank import keeps `go mod tidy` resolving the CLI's dependency graph; the build tag keeps
  # it out of any compilation (a main package cannot be imported).
  cat >"$work/tools.go" <<'EOF'
//go:build tools

package tools

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
EOF
  (
    cd "$work"
    go get "github.com/pulumi/pulumi/pkg/v3@${PULUMI_VERSION}" "github.com/pulumi/pulumi/sdk/v3@${PULUMI_VERSION}"
    go mod tidy
    CGO_ENABLED=0 go build -o "$work/pulumi" \
      -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=${PULUMI_VERSION}" \
      github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
  ) || fail "building github.com/pulumi/pulumi/pkg/v3/cmd/pulumi@${PULUMI_VERSION} failed"
  mkdir -p "$CLI_CACHE"
  mv "$work/pulumi" "$CLI_CACHE/pulumi"
  rm -rf "$work"
}

build_k8s_provider() {
  [ -x "$K8S_CACHE/pulumi-resource-kubernetes" ] && return 0
  echo "60-pulumi.sh: building pulumi-resource-kubernetes ${K8S_PROVIDER_VERSION} (one-time, cached)"
  local module="github.com/pulumi/pulumi-kubernetes/provider/v4"
  local work="$ROOT/.build/kubernetes-$K8S_PROVIDER_VERSION"
  local src
  src="$(go mod download -json "${module}@${K8S_PROVIDER_VERSION}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')" \
    || fail "go mod download ${module}@${K8S_PROVIDER_VERSION} failed"
  [ -d "$src" ] || fail "go mod download ${module}@${K8S_PROVIDER_VERSION} gave no source directory"
  rm -rf "$work" && mkdir -p "$work"
  cp -r "$src/." "$work/"
  chmod -R u+w "$work"
  # The provider reports this version to the engine; without the leading "v" as its releases do.
  local version="${K8S_PROVIDER_VERSION#v}"
  (
    cd "$work"
    go mod edit -dropreplace github.com/pulumi/pulumi-kubernetes/sdk/v4
    go mod tidy
    cd cmd/pulumi-resource-kubernetes
    VERSION="$version" go generate ./...
    [ -s schema-embed.json ] && [ -s terraform-mapping-embed.json ]
    cd "$work"
    CGO_ENABLED=0 go build -o "$work/pulumi-resource-kubernetes" \
      -ldflags "-s -w -X ${module}/pkg/version.Version=${version}" \
      ./cmd/pulumi-resource-kubernetes
  ) || fail "building ${module}@${K8S_PROVIDER_VERSION} failed"
  mkdir -p "$K8S_CACHE"
  mv "$work/pulumi-resource-kubernetes" "$K8S_CACHE/pulumi-resource-kubernetes"
  rm -rf "$work"
}

command -v go >/dev/null || fail "Go toolchain not found; it builds the pulumi CLI and the Kubernetes provider"
build_cli
build_k8s_provider

mkdir -p "$TARGET_DIR"
for binary in "$CLI_CACHE/pulumi" "$K8S_CACHE/pulumi-resource-kubernetes"; do
  target="$TARGET_DIR/$(basename "$binary")"
  cmp -s "$binary" "$target" || install -m 0755 "$binary" "$target"
done
"$TARGET_DIR/pulumi" version >/dev/null || fail "installed pulumi does not run"
