#!/usr/bin/env bash
# README.md's "Run it" blocks, in order (tests/unit/examples/test_aks_cpu_quickstart.py keeps
# them identical). Creates or deletes billable Azure resources: read README.md first.
set -euo pipefail
cd "$(dirname "$0")/../.."

RESOURCE_GROUP="${RESOURCE_GROUP:-taugrid-cpu-quickstart-rg}"
LOCATION="${LOCATION:-westus2}"
AKS_CLUSTER="${AKS_CLUSTER:-taugrid-cpu-quickstart}"
export KUBECONFIG="${KUBECONFIG_FILE:-$PWD/.aks-cpu-quickstart.kubeconfig}"
az group create --name "$RESOURCE_GROUP" --location "$LOCATION" --tags taugrid-disposable=true
az aks create --resource-group "$RESOURCE_GROUP" --name "$AKS_CLUSTER" --location "$LOCATION" --node-count 3 --node-vm-size Standard_D4ds_v5 --enable-managed-identity --generate-ssh-keys
az aks get-credentials --resource-group "$RESOURCE_GROUP" --name "$AKS_CLUSTER" --file "$KUBECONFIG" --overwrite-existing
kubectl get nodes -o wide
tau cluster install --chart charts/taugrid --dependency-update --wait --atomic --timeout 15m
tau cluster validate installation
RESEARCHER_UPN="$(az ad signed-in-user show --query userPrincipalName -o tsv)"
tau workspace create taugrid-default --queue jobqueue --principal-name "$RESEARCHER_UPN" --subject-kind User --subject-name "$RESEARCHER_UPN" --apply
kubectl wait --for=jsonpath='{.status.phase}'=Ready workspace/taugrid-default -n tau-system --timeout=5m
tau run --config examples/aks-cpu-quickstart/tau.yaml --namespace taugrid-default
tau run status tau-aks-cpu-quickstart --namespace taugrid-default --watch
tau logs tau-aks-cpu-quickstart --namespace taugrid-default
