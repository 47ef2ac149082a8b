"""The values document the platform install hands to `charts/taugrid`, built from typed inputs.

It is the Terraform root's generated `taugrid-values.yaml`, but as data: every key comes from a
typed field, so a GPU class with a colon or a client ID with a quote cannot corrupt the
document the way a text template can. Pure functions; no Pulumi types.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from infra.config import ADX_LOGS_DATABASE, ADX_METRICS_DATABASE
from tau import keys

SYSTEM_NAMESPACE = "tau-system"
RELEASE_NAME = "taugrid"
PORTAL_SERVICE_ACCOUNT = "tau-portal"
PORTAL_SERVICE = "tau-portal"
RECORDER_SERVICE_ACCOUNT = "tau-lifecycle-recorder"
ADX_MON_NAMESPACE = "adx-mon"
LIFECYCLE_TABLE = "TauExpRunLifecycle"
GPU_RESOURCE = keys.NVIDIA_GPU
GPU_TAINT = {"key": "sku", "value": "gpu", "effect": "NoSchedule"}
DCGM_SOURCE_EXPORTER = "exporter"


@dataclass(frozen=True)
class GpuQueue:
    """The GPU pool as the baseline queue and GPU monitoring see it."""

    flavor_name: str
    monitoring_sku_name: str
    gpu_class: str
    gpu_series: str
    vm_size: str
    count_per_node: int
    quota: int
    dcgm_exporter_url: str | None
    """Set when this stack installs the DCGM exporter (self_managed); None keeps the chart's
    host-local default (AKS managed GPU experience)."""


@dataclass(frozen=True)
class AdxWiring:
    endpoint: str
    portal_client_id: str
    recorder_client_id: str | None
    """Set when the lifecycle recorder is enabled."""


@dataclass(frozen=True)
class PlatformValues:
    workspace_namespace: str
    cluster: str = ""
    """The AKS name: the recorder's cluster (part of durable run ids)."""
    gpu: GpuQueue | None = None
    adx: AdxWiring | None = None
    overrides: Mapping[str, Any] | None = None


def taugrid_values(inputs: PlatformValues) -> dict[str, Any]:
    """The chart values for one stack, in the key layout of `charts/taugrid/values.schema.json`.

    Like Terraform's template, a stack whose lifecycle recorder ingests into ADX points the
    Portal's durable run history at the same table (source kusto), so the Runs board shows
    what the recorder wrote. The Portal's scope (workloadNamespace, jobs scope) is left to the
    operator: its Role needs the workspace namespace, which this stack creates only after the
    release.
    """
    values: dict[str, Any] = {
        "components": {"gpuMonitoring": {"enabled": inputs.gpu is not None}},
        "baselineQueue": {"gpu": _queue_gpu(inputs.gpu)},
        "taugrid-core": {"portal": _portal(inputs.cluster, inputs.adx)},
    }
    if inputs.adx is not None:
        values["tau-core-controller"] = _log_offload(inputs.cluster, inputs.adx.endpoint)
    if inputs.adx is not None and inputs.adx.recorder_client_id is not None:
        values["taugrid-core"]["lifecycleRecorder"] = _lifecycle_recorder(
            inputs.workspace_namespace,
            inputs.cluster,
            inputs.adx.endpoint,
            inputs.adx.recorder_client_id,
        )
    if inputs.gpu is not None:
        values["gpu-monitoring"] = _gpu_monitoring(inputs.gpu)
    return deep_merge(values, inputs.overrides or {})


def _queue_gpu(gpu: GpuQueue | None) -> dict[str, Any]:
    if gpu is None:
        return {"enabled": False}
    return {
        "enabled": True,
        "flavors": [
            {
                "name": gpu.flavor_name,
                "nodeLabels": {
                    keys.KUBERNETES_OS: "linux",
                    keys.AKS_GPU_SKU: gpu.monitoring_sku_name,
                    keys.GPU_CLASS: gpu.gpu_class,
                    keys.KUEUE_GPU_SERIES: gpu.gpu_series,
                },
                "nodeTaints": [dict(GPU_TAINT)],
                "tolerations": [],
                # Kueue quotas are quantities: the chart renders them as quoted strings.
                "resources": [{"name": GPU_RESOURCE, "nominalQuota": str(gpu.quota)}],
            }
        ],
    }


def _portal(cluster: str, adx: AdxWiring | None) -> dict[str, Any]:
    service_account: dict[str, Any] = {"create": True, "name": PORTAL_SERVICE_ACCOUNT}
    portal: dict[str, Any] = {
        "enabled": True,
        "cluster": cluster,
        "serviceAccount": service_account,
        "rbac": {"create": True},
    }
    if adx is None:
        return portal
    service_account["annotations"] = {keys.AZURE_WORKLOAD_IDENTITY_CLIENT_ID: adx.portal_client_id}
    if adx.recorder_client_id is not None:
        # Without the recorder nothing writes the lifecycle table the kusto source reads.
        portal["runHistory"] = {"enabled": True}
        portal["source"] = "kusto"
        portal["kusto"] = {
            "endpoint": adx.endpoint,
            "database": ADX_METRICS_DATABASE,
            "table": LIFECYCLE_TABLE,
        }
    return portal


def _log_offload(cluster: str, endpoint: str) -> dict[str, Any]:
    """The log connection every workspace namespace gets (ConfigMap tau-log-connection): the
    stack's Logs database, and as the rows' Cluster the AKS name, which is what adx-mon's
    `global.clusterName` is set to when it is installed onto this cluster."""
    return {
        "logOffload": {
            "kusto": {"endpoint": endpoint, "database": ADX_LOGS_DATABASE, "cluster": cluster}
        }
    }


def _lifecycle_recorder(
    target_namespace: str, cluster: str, endpoint: str, recorder_client_id: str
) -> dict[str, Any]:
    return {
        "enabled": True,
        # Its ServiceAccount is named after resourceName, the federated subject's name.
        "resourceName": RECORDER_SERVICE_ACCOUNT,
        "targetNamespace": target_namespace,
        "cluster": cluster,
        "workloadIdentity": {"enabled": True},
        "kusto": {"endpoint": endpoint, "database": ADX_METRICS_DATABASE, "table": LIFECYCLE_TABLE},
        "serviceAccount": {
            "annotations": {keys.AZURE_WORKLOAD_IDENTITY_CLIENT_ID: recorder_client_id}
        },
        "rbac": {"create": True},
    }


def _gpu_monitoring(gpu: GpuQueue) -> dict[str, Any]:
    monitoring: dict[str, Any] = {
        "gpuSkus": {
            gpu.monitoring_sku_name: {"instanceTypes": [gpu.vm_size], "numGpus": gpu.count_per_node}
        }
    }
    if gpu.dcgm_exporter_url is not None:
        monitoring["dcgmHealth"] = {
            "source": DCGM_SOURCE_EXPORTER,
            "exporterUrl": gpu.dcgm_exporter_url,
        }
    return monitoring


def deep_merge(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """Helm's rule for layered values files: maps merge key by key, anything else replaces."""
    merged = copy.deepcopy(dict(base))
    for key, value in overlay.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _enabled(section: Any) -> bool:
    return not (isinstance(section, Mapping) and section.get("enabled") is False)


def queue_after_release(values: Mapping[str, Any]) -> bool:
    """True when the release installs Kueue and a baseline queue: then the queue must wait for
    Kueue's webhooks, so the stack applies it after the release (infra/queue.py)."""
    components = values.get("components") or {}
    return _enabled(components.get("kueue")) and _enabled(values.get("baselineQueue"))


def without_queue(values: Mapping[str, Any]) -> dict[str, Any]:
    """The release's values: the same document with only the baseline queue switched off."""
    return deep_merge(values, {"baselineQueue": {"enabled": False}})
