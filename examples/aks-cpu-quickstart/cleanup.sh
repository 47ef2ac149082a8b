#!/usr/bin/env bash
# README.md's "Clean up" blocks, in order (tests/unit/examples/test_aks_cpu_quickstart.py keeps
# them identical). Creates or deletes billable Azure resources: read README.md first.
set -euo pipefail
cd "$(dirname "$0")/../.."

RESOURCE_GROUP="${RESOURCE_GROUP:-taugrid-cpu-quickstart-rg}"
az group delete --name "$RESOURCE_GROUP" --yes
az group show --name "$RESOURCE_GROUP" || true
rm -f "${KUBECONFIG_FILE:-$PWD/.aks-cpu-quickstart.kubeconfig}"
