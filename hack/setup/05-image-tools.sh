#!/usr/bin/env bash
# Tools of the daemonless image build (hack/images) and the local registry it pushes to:
# Debian's mmdebstrap (base rootfs), umoci (OCI layers and config), skopeo (push) and
# docker-registry (distribution v2). Idempotent: installs only what is missing. Fails loudly.
set -euo pipefail

need=()
for tool in mmdebstrap:mmdebstrap umoci:umoci skopeo:skopeo docker-registry:docker-registry; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool##*:}")
done
if [ "${#need[@]}" -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: ${need[*]} missing and apt-get is unavailable; install Debian's ${need[*]} packages (owner: developer machine)" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
for tool in mmdebstrap umoci skopeo docker-registry; do
  command -v "$tool" >/dev/null 2>&1 || { echo "error: apt-get install finished but $tool is missing (owner: developer machine)" >&2; exit 1; }
done
