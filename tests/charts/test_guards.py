"""Every fail-closed render guard refuses its values with a message naming the key to fix."""

from __future__ import annotations

import json

import pytest

from .conftest import RenderError

FLAVOR = {
    "name": "h200-pool",
    "nodeLabels": {"tau.azure.com/gpu-class": "h200-141gb"},
    "nodeTaints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}],
    "tolerations": [],
    "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8"}],
}
PROFILE = {
    "name": "remote.training",
    "applicability": {"teams": ["research"], "namespaces": ["taugrid-default"]},
    "gpusPerWorker": 1,
    "workerCount": 1,
    "mode": "fixed",
    "placement": "independent",
    "defaultLocalQueue": "multikueue",
    "executionTarget": "multiKueue",
    "priorities": {"workloadPriorityClassName": "a", "podPriorityClassName": "a"},
}


def _json(key: str, value: object) -> str:
    return f"json:{key}={json.dumps(value)}"


def _flavor(**changes: object) -> str:
    """The whole GPU flavor list (--set on a list index would replace the list)."""
    return _json("baselineQueue.gpu.flavors", [{**FLAVOR, **changes}])


PORTAL_CLIENT_ID = (
    "taugrid-core.portal.serviceAccount.annotations.azure\\.workload\\.identity/client-id"
)

GUARDS = {
    "gpu enabled without flavors": (
        [_json("baselineQueue.gpu.flavors", [])],
        "baselineQueue.gpu.enabled is true but baselineQueue.gpu.flavors is empty",
    ),
    "gpu class label on the CPU flavor": (
        ["baselineQueue.flavor.nodeLabels.tau\\.azure\\.com/gpu-class=h200-141gb"],
        "must not carry the GPU label tau.azure.com/gpu-class",
    ),
    "gpu series label on the CPU flavor": (
        ["baselineQueue.flavor.nodeLabels.kueue\\.azure\\.com/gpu-series=nd-h200-v5"],
        "must not carry the GPU label kueue.azure.com/gpu-series",
    ),
    "wildcard toleration on the CPU flavor": (
        ["baselineQueue.flavor.tolerations[0].operator=Exists"],
        "tolerates GPU node taints",
    ),
    "nvidia toleration on the CPU flavor": (
        [
            "baselineQueue.flavor.tolerations[0].key=nvidia.com/gpu",
            "baselineQueue.flavor.tolerations[0].operator=Exists",
        ],
        "tolerates GPU node taints",
    ),
    "sku=gpu toleration on the CPU flavor": (
        [
            "baselineQueue.flavor.tolerations[0].key=sku",
            "baselineQueue.flavor.tolerations[0].value=gpu",
        ],
        "tolerates GPU node taints",
    ),
    "CPU toleration matching a custom GPU taint": (
        [
            _flavor(nodeTaints=[{"key": "pool", "value": "a100", "effect": "NoSchedule"}]),
            "baselineQueue.flavor.tolerations[0].key=pool",
            "baselineQueue.flavor.tolerations[0].value=a100",
        ],
        "tolerates taint",
    ),
    "GPU resource in the CPU resources": (
        [
            _json(
                "baselineQueue.resources",
                [
                    {"name": "cpu", "nominalQuota": "1"},
                    {"name": "nvidia.com/gpu", "nominalQuota": "8"},
                ],
            )
        ],
        "resource nvidia.com/gpu is listed in both baselineQueue.resources",
    ),
    "GPU flavor without node labels under topology": (
        [_flavor(nodeLabels={})],
        "nodeLabels is empty while baselineQueue.topology.enabled is true",
    ),
    "GPU flavor without taints": (
        [_flavor(nodeTaints=[])],
        "CPU-only workloads could fall through to GPU quota",
    ),
    "GPU flavor tolerating its own taint": (
        [_flavor(tolerations=[{"key": "sku", "operator": "Exists"}])],
        "matches the flavor's own taint",
    ),
    "GPU flavor resources not matching coveredResources": (
        [_flavor(resources=[{"name": "gpu.nvidia.com", "nominalQuota": "8"}])],
        "must equal baselineQueue.gpu.coveredResources",
    ),
    "gpu-monitoring namespace override": (
        ["gpu-monitoring.namespace=monitoring"],
        "gpu-monitoring.namespace must stay empty",
    ),
    "multiKueue profile without the MultiKueue capability": (
        [
            "kueue.aksExtension.enableMultiKueue=false",
            _json("tau-core-controller.tauCluster.workloadProfiles", [PROFILE]),
        ],
        "executionTarget multiKueue but kueue.aksExtension.enableMultiKueue is false",
    ),
    "two GPU monitoring profiles claiming one instance type": (
        [
            "gpu-monitoring.gpuSkus.h200-copy.instanceTypes[0]=Standard_ND96isr_H200_v5",
            "gpu-monitoring.gpuSkus.h200-copy.numGpus=8",
        ],
        "instance type Standard_ND96isr_H200_v5 is claimed by both",
    ),
    "exporter DCGM source on loopback": (
        ["gpu-monitoring.dcgmHealth.source=exporter"],
        "dcgmHealth.source exporter needs an explicit non-loopback",
    ),
    "host-dcgmi DCGM source off-host": (
        ["gpu-monitoring.dcgmHealth.exporterUrl=http://dcgm-exporter.gpu:9400/metrics"],
        "exporterUrl must be a loopback URL",
    ),
    "host-dcgmi DCGM source off-host through the deprecated scrapeUrl": (
        ["gpu-monitoring.dcgmHealth.scrapeUrl=http://dcgm-exporter.gpu:9400/metrics"],
        "exporterUrl must be a loopback URL",
    ),
    "image prewarm (reserved)": (
        ["taugrid-core.prewarm.enabled=true"],
        "taugrid-core.prewarm.enabled is reserved",
    ),
    "Stellar service (reserved)": (
        ["taugrid-core.stellar.enabled=true"],
        "taugrid-core.stellar.enabled is reserved",
    ),
    "lifecycle recorder without its target namespace": (
        ["taugrid-core.lifecycleRecorder.enabled=true"],
        "lifecycleRecorder.targetNamespace is required",
    ),
    "lifecycle recorder without a sink": (
        [
            "taugrid-core.lifecycleRecorder.enabled=true",
            "taugrid-core.lifecycleRecorder.targetNamespace=research",
            "taugrid-core.lifecycleRecorder.cluster=aks-1",
        ],
        "lifecycleRecorder needs a sink",
    ),
    "lifecycle recorder to ADX without workload identity": (
        [
            "taugrid-core.lifecycleRecorder.enabled=true",
            "taugrid-core.lifecycleRecorder.targetNamespace=research",
            "taugrid-core.lifecycleRecorder.cluster=aks-1",
            "taugrid-core.lifecycleRecorder.kusto.endpoint=https://adx.example",
        ],
        "needs workloadIdentity.enabled=true",
    ),
    "Portal KueueViz without a workspace namespace": (
        ["taugrid-core.portal.kueueviz.enabled=true"],
        "portal.kueueviz.enabled needs portal.workloadNamespace",
    ),
    "Portal Kusto source without an endpoint": (
        ["taugrid-core.portal.source=kusto", "taugrid-core.portal.runHistory.enabled=true"],
        "portal.source kusto needs portal.kusto.endpoint",
    ),
    "Portal Kusto source without run history": (
        [
            "taugrid-core.portal.source=kusto",
            "taugrid-core.portal.kusto.endpoint=https://adx.westus.kusto.windows.net",
            f"{PORTAL_CLIENT_ID}=abc",
        ],
        "set portal.runHistory.enabled=true",
    ),
    "Portal Kusto source without workload identity": (
        [
            "taugrid-core.portal.source=kusto",
            "taugrid-core.portal.runHistory.enabled=true",
            "taugrid-core.portal.kusto.endpoint=https://adx.westus.kusto.windows.net",
        ],
        "needs portal.serviceAccount.annotations azure.workload.identity/client-id",
    ),
    "Portal Kusto endpoint with the local source": (
        ["taugrid-core.portal.kusto.endpoint=https://adx.westus.kusto.windows.net"],
        "portal.kusto.endpoint is read only with portal.source kusto",
    ),
    "Portal workspace-scoped Jobs board without a namespace": (
        ["taugrid-core.portal.jobs.scopeMode=workspace"],
        "scopeMode workspace needs portal.workloadNamespace",
    ),
}


@pytest.mark.parametrize("case", GUARDS)
def test_guard_refuses_to_render(render, case):
    sets, message = GUARDS[case]
    with pytest.raises(RenderError, match="owner: platform operator") as failure:
        render(*sets)
    assert message in str(failure.value)


def test_guards_pass_the_defaults_and_a_non_gpu_cpu_toleration(render):
    objects = render(
        "baselineQueue.flavor.tolerations[0].key=dedicated",
        "baselineQueue.flavor.tolerations[0].value=batch",
        "baselineQueue.flavor.tolerations[0].effect=NoSchedule",
    )
    (cpu,) = [o for o in objects if o["metadata"]["name"] == "taugrid-default-cpu"]
    assert cpu["spec"]["tolerations"][0]["key"] == "dedicated"


@pytest.mark.parametrize("key", ["exporterUrl", "scrapeUrl"])
def test_exporter_source_with_a_service_url_renders(render, key):
    """exporterUrl is the docs' name; scrapeUrl stays accepted as its deprecated alias."""
    objects = render(
        "gpu-monitoring.dcgmHealth.source=exporter",
        f"gpu-monitoring.dcgmHealth.{key}=http://dcgm-exporter.gpu-operator:9400/metrics",
        "gpu-monitoring.enabledGpuSkus={h200}",
    )
    (ds,) = [o for o in objects if o["kind"] == "DaemonSet"]
    collector = ds["spec"]["template"]["spec"]["containers"][1]
    assert "--dcgm-url=http://dcgm-exporter.gpu-operator:9400/metrics" in collector["args"]


def test_a_profile_url_wins_over_the_global_one(render):
    objects = render(
        "gpu-monitoring.dcgmHealth.source=exporter",
        "gpu-monitoring.dcgmHealth.exporterUrl=http://dcgm-exporter.gpu-operator:9400/metrics",
        "gpu-monitoring.gpuSkus.h200.dcgmHealth.scrapeUrl=http://dcgm.h200-pool:9400/metrics",
        "gpu-monitoring.enabledGpuSkus={h200}",
    )
    (ds,) = [o for o in objects if o["kind"] == "DaemonSet"]
    collector = ds["spec"]["template"]["spec"]["containers"][1]
    assert "--dcgm-url=http://dcgm.h200-pool:9400/metrics" in collector["args"]


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("components.kueue.enabled=true", "kueue"),
        ("components.kuberayOperator.enabled=true", "kuberay-operator"),
    ],
)
def test_enabled_dependency_that_is_not_vendored_fails_with_the_vendoring_hint(render, key, hint):
    with pytest.raises(RenderError, match=f"the {hint} chart is not vendored") as failure:
        render(key)
    assert "helm dependency build" in str(failure.value)


def test_values_schema_rejects_a_portal_kusto_endpoint_that_is_not_a_url(render):
    with pytest.raises(RenderError, match="endpoint"):
        render("taugrid-core.portal.kusto.endpoint=adx westus")


def test_values_schema_rejects_an_unknown_mode(render):
    with pytest.raises(RenderError, match="managementMode"):
        render("tau-core-controller.tauCluster.managementMode=Sometimes")


def test_values_schema_rejects_an_unknown_portal_jobs_scope_mode(render):
    with pytest.raises(RenderError, match="scopeMode"):
        render("taugrid-core.portal.jobs.scopeMode=everyone")


def test_values_schema_rejects_a_misspelt_key(render):
    with pytest.raises(RenderError, match="baselineQueue"):
        render("baselineQueue.nmae=jobqueue")
