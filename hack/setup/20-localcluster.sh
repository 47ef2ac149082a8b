#!/usr/bin/env bash
# Build (or reuse from the version-keyed cache) the local control plane binaries the e2e suite
# starts: etcd, kube-apiserver, controller-manager, scheduler, kubectl, KWOK, Kueue, KubeRay.
# A warm cache takes seconds; a cold build took 27 minutes on 2 cores. Fails loudly.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec .venv/bin/python -m hack.localcluster build
