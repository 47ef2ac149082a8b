"""GpuNodePool: the GPU user pool and the GPU software stack the platform install waits for.

Two stack owners exist (`gpu_stack_mode`). In `self_managed` AKS installs only the driver and
this component installs the NVIDIA device plugin and the upstream DCGM exporter; in
`aks_managed_preview` AKS owns driver, device plugin and a node-local exporter, so nothing is
installed here. MIG normalisation is an ordered step between the device plugin and the platform:
TauGrid's quota counts whole GPUs, which a MIG-partitioned A100 does not advertise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import containerservice

from infra.config import AKS_MANAGED_PREVIEW, SELF_MANAGED
from tau import keys

GPU_TAINT = {"key": "sku", "value": "gpu", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
MANAGED_GPU_TAG = "EnableManagedGPUExperience"

DEVICE_PLUGIN_NAME = "nvidia-device-plugin-daemonset"
DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.17.2"
MIG_NORMALIZER_NAME = "taugrid-mig-normalizer"
MIG_NORMALIZER_IMAGE = "mcr.microsoft.com/azurelinux/base/core:3.0"
KUBE_SYSTEM = "kube-system"

DCGM_RELEASE = "dcgm-exporter"
DCGM_NAMESPACE = "dcgm-exporter"
DCGM_REPOSITORY = "https://nvidia.github.io/dcgm-exporter/helm-charts"
DCGM_PORT = 9400
DCGM_EXPORTER_URL = f"http://{DCGM_RELEASE}.{DCGM_NAMESPACE}.svc:{DCGM_PORT}/metrics"

# Runs nvidia-smi on the host (hostPID + nsenter), where the AKS-installed driver lives. When a
# GPU reports MIG enabled it disables MIG and reboots the node, the equivalent of Terraform's
# scale-set restart: after the reboot the init container runs again, finds MIG off and lets
# the pod start. Unknown modes fail the pod, so the rollout (and `pulumi up`) fails loudly.
MIG_NORMALIZE_SCRIPT = """\
set -euo pipefail
command -v nsenter >/dev/null || tdnf install -y --quiet util-linux >/dev/null
host() { nsenter -t 1 -m -u -i -n -p -- "$@"; }
modes=$(host nvidia-smi --query-gpu=mig.mode.current --format=csv,noheader | tr -d '\\r')
if printf '%s\\n' "$modes" | grep -Evx 'Enabled|Disabled|N/A|\\[N/A\\]' | grep -q .; then
  echo "unexpected MIG modes on $NODE_NAME: $modes" >&2
  exit 1
fi
if printf '%s\\n' "$modes" | grep -qx Enabled; then
  host nvidia-smi -mig 0
  echo "MIG disabled on $NODE_NAME; rebooting the node to apply it"
  host systemctl reboot
  sleep 600
  exit 1
fi
echo "MIG is off on every GPU of $NODE_NAME"
"""


@dataclass(frozen=True)
class GpuNodePoolArgs:
    cluster_name: pulumi.Input[str]
    resource_group_name: pulumi.Input[str]
    provider: k8s.Provider
    pool_name: str = "gpu"
    vm_size: str = "Standard_NC24ads_A100_v4"
    node_count: int = 1
    auto_scaling_enabled: bool = False
    min_count: int = 1
    max_count: int = 1
    stack_mode: str = SELF_MANAGED
    monitoring_sku_name: str = "a100-pcie-1g"
    gpu_class: str = "a100-80gb"
    gpu_series: str = "nc24ads-a100-v4"
    normalize_mig: bool = True
    dcgm_exporter_chart_version: str = "4.8.3"
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def node_labels(self) -> dict[str, str]:
        return {
            keys.AKS_GPU_SKU: self.monitoring_sku_name,
            keys.GPU_CLASS: self.gpu_class,
            keys.KUEUE_GPU_SERIES: self.gpu_series,
        }

    @property
    def pool_tags(self) -> dict[str, str]:
        if self.stack_mode == AKS_MANAGED_PREVIEW:
            # The API version in use has no gpuProfile.nvidia.managementMode; AKS reads this
            # tag at pool creation instead, until the field is exposed.
            return {**self.tags, MANAGED_GPU_TAG: "true"}
        return dict(self.tags)


class GpuNodePool(pulumi.ComponentResource):
    pool_name: pulumi.Output[str]
    ready: list[pulumi.Resource]
    """What the platform install must wait for: the pool and every GPU stack step."""

    def __init__(
        self, name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("taugrid:infra:GpuNodePool", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        on_cluster = pulumi.ResourceOptions(parent=self, provider=args.provider)

        scaling: dict[str, object] = (
            {"enable_auto_scaling": True, "min_count": args.min_count, "max_count": args.max_count}
            if args.auto_scaling_enabled
            else {"enable_auto_scaling": False, "count": args.node_count}
        )
        pool = containerservice.AgentPool(
            f"{name}-pool",
            agent_pool_name=args.pool_name,
            resource_name_=args.cluster_name,
            resource_group_name=args.resource_group_name,
            vm_size=args.vm_size,
            mode="User",
            os_type="Linux",
            os_sku="Ubuntu",
            gpu_profile=containerservice.GPUProfileArgs(driver="Install"),
            node_taints=["{key}={value}:{effect}".format(**GPU_TAINT)],
            node_labels=args.node_labels,
            upgrade_settings=containerservice.AgentPoolUpgradeSettingsArgs(max_surge="10%"),
            tags=args.pool_tags,
            opts=child,
            **scaling,
        )
        ready: list[pulumi.Resource] = [pool]
        previous: pulumi.Resource = pool

        if args.stack_mode == SELF_MANAGED:
            previous = k8s.apps.v1.DaemonSet(
                f"{name}-device-plugin",
                metadata={"name": DEVICE_PLUGIN_NAME, "namespace": KUBE_SYSTEM},
                spec=_device_plugin_spec(args.pool_name),
                opts=pulumi.ResourceOptions.merge(
                    on_cluster, pulumi.ResourceOptions(depends_on=[previous])
                ),
            )
            ready.append(previous)

        if args.normalize_mig:
            previous = k8s.apps.v1.DaemonSet(
                f"{name}-mig-normalizer",
                metadata={"name": MIG_NORMALIZER_NAME, "namespace": KUBE_SYSTEM},
                spec=_mig_normalizer_spec(args.pool_name),
                opts=pulumi.ResourceOptions.merge(
                    on_cluster, pulumi.ResourceOptions(depends_on=[previous])
                ),
            )
            ready.append(previous)

        if args.stack_mode == SELF_MANAGED:
            dcgm = k8s.helm.v3.Release(
                f"{name}-dcgm-exporter",
                name=DCGM_RELEASE,
                chart="dcgm-exporter",
                version=args.dcgm_exporter_chart_version,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=DCGM_REPOSITORY),
                namespace=DCGM_NAMESPACE,
                create_namespace=True,
                values=dcgm_exporter_values(args.pool_name),
                timeout=15 * 60,
                opts=pulumi.ResourceOptions.merge(
                    on_cluster, pulumi.ResourceOptions(depends_on=[previous])
                ),
            )
            ready.append(dcgm)

        self.pool_name = pool.name
        self.ready = ready
        self.register_outputs({"pool_name": self.pool_name})


def dcgm_exporter_values(pool_name: str) -> dict[str, object]:
    """Values for the upstream exporter chart: GPU nodes only, node-local Service, scraped by
    adx-mon through its pod annotation (no Prometheus operator on the cluster)."""
    return {
        "nodeSelector": {keys.AKS_AGENTPOOL: pool_name},
        "tolerations": [GPU_TOLERATION],
        "podAnnotations": {keys.ADX_MON_SCRAPE: "true"},
        "service": {"internalTrafficPolicy": "Local"},
        "kubernetes": {"enablePodLabels": False},
        "serviceMonitor": {"enabled": False},
    }


def _pool_pod_placement(pool_name: str) -> dict[str, object]:
    return {"nodeSelector": {keys.AKS_AGENTPOOL: pool_name}, "tolerations": [GPU_TOLERATION]}


def _device_plugin_spec(pool_name: str) -> dict[str, object]:
    labels = {"name": "nvidia-device-plugin-ds"}
    return {
        "selector": {"matchLabels": labels},
        "updateStrategy": {"type": "RollingUpdate"},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                **_pool_pod_placement(pool_name),
                "priorityClassName": "system-node-critical",
                "containers": [
                    {
                        "name": "nvidia-device-plugin-ctr",
                        "image": DEVICE_PLUGIN_IMAGE,
                        "env": [{"name": keys.ENV_NVIDIA_FAIL_ON_INIT_ERROR, "value": "false"}],
                        "securityContext": {
                            "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]},
                        },
                        "volumeMounts": [
                            {
                                "name": "device-plugin",
                                "mountPath": "/var/lib/kubelet/device-plugins",
                            }
                        ],
                    }
                ],
                "volumes": [
                    {
                        "name": "device-plugin",
                        "hostPath": {"path": "/var/lib/kubelet/device-plugins"},
                    }
                ],
            },
        },
    }


def _mig_normalizer_spec(pool_name: str) -> dict[str, object]:
    labels = {"app.kubernetes.io/name": MIG_NORMALIZER_NAME}
    return {
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                **_pool_pod_placement(pool_name),
                "hostPID": True,
                # The normalisation runs once per node as an init container; the DaemonSet is
                # rolled out (and the step complete) when every pool node got past it.
                "initContainers": [
                    {
                        "name": "normalize",
                        "image": MIG_NORMALIZER_IMAGE,
                        "command": ["bash", "-c", MIG_NORMALIZE_SCRIPT],
                        "env": [
                            {
                                "name": keys.ENV_NODE_NAME,
                                "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
                            }
                        ],
                        "securityContext": {"privileged": True},
                    }
                ],
                "containers": [
                    {
                        "name": "hold",
                        "image": MIG_NORMALIZER_IMAGE,
                        "command": ["bash", "-c", "trap 'exit 0' TERM; sleep infinity & wait"],
                        "resources": {"requests": {"cpu": "1m", "memory": "4Mi"}},
                    }
                ],
            },
        },
    }
