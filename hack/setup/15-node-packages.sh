#!/usr/bin/env bash
# Debian packages the local cluster's real node runs: containerd and runc, the CNI reference
# plugins, iptables for kube-proxy, the distribution (v2) registry, and busybox-static packed by
# umoci (pushed by skopeo) as the node's pause and shell image. Services are not started by the
# packages: each local cluster starts its own, on its own sockets and directories.
# Idempotent; fails loudly if a package cannot be installed or does not provide its command.
set -euo pipefail
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"

packages=(containerd runc containernetworking-plugins iptables iproute2 conntrack util-linux
  docker-registry busybox-static umoci skopeo)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "15-node-packages.sh: needs root to install: ${missing[*]}" >&2
    exit 1
  fi
  apt-get update -qq
  # policy-rc.d answering 101 keeps the packages from starting their system-wide daemons.
  policy=/usr/sbin/policy-rc.d
  restore=""
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy"
    restore="rm -f $policy"
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  $restore
fi

for command in containerd runc containerd-shim-runc-v2 iptables ip nsenter docker-registry \
  busybox umoci skopeo; do
  command -v "$command" >/dev/null || {
    echo "15-node-packages.sh: $command is missing after install" >&2
    exit 1
  }
done
for plugin in bridge host-local loopback portmap; do
  [ -x "/usr/lib/cni/$plugin" ] || {
    echo "15-node-packages.sh: CNI plugin /usr/lib/cni/$plugin is missing" >&2
    exit 1
  }
done
[ -x /bin/busybox ] || {
  echo "15-node-packages.sh: /bin/busybox (busybox-static) is missing" >&2
  exit 1
}
# Every kubelet and containerd holds inotify instances; with a few local clusters (and their
# Kueue, which fails with "too many open files") the default 128 per user runs out.
for limit in fs.inotify.max_user_instances=8192 fs.inotify.max_user_watches=1048576; do
  key="${limit%%=*}" want="${limit#*=}"
  have="$(sysctl -n "$key")"
  if [ "$have" -lt "$want" ]; then
    sysctl -q -w "$limit" || {
      echo "15-node-packages.sh: cannot raise $key to $want (root needed)" >&2
      exit 1
    }
  fi
done
echo "15-node-packages.sh: real node packages present, inotify limits raised"
