"""Every stack in stacks/ as `pulumi preview` would see it: resources, properties, order, outputs.

The program runs unchanged (infra/__main__.py) against Pulumi's mock engine; Azure answers
with outputs derived from the inputs (tests/infra/infra_mocks.py).
"""

from __future__ import annotations

import subprocess

import pulumi
import pytest
import yaml
from infra_mocks import (
    CALLER_TENANT,
    IDENTITY_TENANT,
    MOCK_KUBECONFIG,
    ROOT,
    SUBSCRIPTION,
    AzureMocks,
    RecordingMonitor,
    client_id,
    issuer_url,
    kusto_uri,
    run_stack,
    stack_settings,
)

from infra.config import (
    MSG_CLUSTER_NAME,
    MSG_SUBSCRIPTION_REQUIRED,
    StackConfigError,
    adx_cluster_name,
    parse_stack_config,
)
from tau import keys

ZERO_ID = "00000000-0000-0000-0000-000000000000"

RG = "azure-native:resources:ResourceGroup"
AKS = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
K8S_PROVIDER = "pulumi:providers:kubernetes"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
WORKSPACE = "kubernetes:tau.azure.com/v1alpha1:TauWorkspace"
IDENTITY = "azure-native:managedidentity:UserAssignedIdentity"
FIC = "azure-native:managedidentity:FederatedIdentityCredential"
KUSTO = "azure-native:kusto:Cluster"
DATABASE = "azure-native:kusto:ReadWriteDatabase"
GRANT = "azure-native:kusto:DatabasePrincipalAssignment"

OUTPUT_NAMES = {
    "resource_group_name",
    "cluster_name",
    "get_credentials_command",
    "portal_port_forward_command",
    "adx_endpoint",
    "adx_cluster_name",
    "gpu_node_pool_name",
    "gpu_quota",
}
PORT_FORWARD = "kubectl -n tau-system port-forward service/tau-portal 18080:80"

AKS_BASE = [
    ("taugrid:infra:AksCluster", "aks"),
    (RG, "aks-resource-group"),
    (AKS, "aks-cluster"),
    (K8S_PROVIDER, "aks-kubernetes"),
]
PLATFORM = [("taugrid:infra:TauGridPlatform", "platform"), (RELEASE, "platform-release")]
PRIORITY_CLASS = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2"
CLUSTER_QUEUE = f"{KUEUE}:ClusterQueue"
FLAVOR = f"{KUEUE}:ResourceFlavor"
TOPOLOGY = f"{KUEUE}:Topology"
WORKLOAD_PRIORITY_CLASS = f"{KUEUE}:WorkloadPriorityClass"


def queue(*gpu_flavors: str) -> list[tuple[str, str]]:
    """The baseline queue an AKS stack applies after its release (Kueue inside the release)."""
    return [
        (TOPOLOGY, "platform-queue-topology-default-node-topology"),
        (FLAVOR, "platform-queue-resourceflavor-taugrid-default-cpu"),
        *((FLAVOR, f"platform-queue-resourceflavor-{flavor}") for flavor in gpu_flavors),
        (CLUSTER_QUEUE, "platform-queue-clusterqueue-jobqueue"),
        *(
            (kind, f"platform-queue-{kind.rsplit(':', 1)[1].lower()}-{name}")
            for kind in (PRIORITY_CLASS, WORKLOAD_PRIORITY_CLASS)
            for name in ("taugrid-default", "taugrid-priority")
        ),
    ]


GPU_SELF_MANAGED = [
    ("taugrid:infra:GpuNodePool", "gpu"),
    (POOL, "gpu-pool"),
    (DAEMONSET, "gpu-device-plugin"),
    (RELEASE, "gpu-dcgm-exporter"),
]
MIG = [(DAEMONSET, "gpu-mig-normalizer")]
ADX = [
    ("taugrid:infra:AdxMetrics", "adx"),
    (KUSTO, "adx-cluster"),
    (DATABASE, "adx-metrics"),
    (DATABASE, "adx-logs"),
    (DATABASE, "adx-costtracking"),
    (DATABASE, "adx-audit"),
    (GRANT, "adx-taugrid-adx-mon-metrics"),
    (GRANT, "adx-taugrid-adx-mon-logs"),
    (GRANT, "adx-taugrid-adx-mon-costtracking"),
    (GRANT, "adx-taugrid-adx-mon-audit"),
    (GRANT, "adx-taugrid-portal-viewer"),
    (GRANT, "adx-taugrid-portal-cost-viewer"),
    ("taugrid:infra:WorkloadIdentity", "portal-identity"),
    (IDENTITY, "portal-identity-identity"),
    (FIC, "portal-identity-tau-portal"),
    ("taugrid:infra:WorkloadIdentity", "adx-mon-identity"),
    (IDENTITY, "adx-mon-identity-identity"),
    (FIC, "adx-mon-identity-adx-mon-ingestor"),
    (FIC, "adx-mon-identity-adx-mon-alerter"),
]
RECORDER = [
    ("taugrid:infra:WorkloadIdentity", "lifecycle-recorder-identity"),
    (IDENTITY, "lifecycle-recorder-identity-identity"),
    (FIC, "lifecycle-recorder-identity-tau-lifecycle-recorder"),
    (GRANT, "adx-taugrid-lifecycle-recorder-ingestor"),
    (NAMESPACE, "platform-namespace-taugrid-default"),
]
BOOTSTRAP = [
    ("taugrid:infra:TauWorkspaceBootstrap", "bootstrap-workspace"),
    (WORKSPACE, "bootstrap-workspace-workspace"),
]

EXPECTED_RESOURCES = {
    "dev": [
        (K8S_PROVIDER, "existing-cluster"),
        *PLATFORM,
        *BOOTSTRAP,
    ],
    "aks-cpu": [*AKS_BASE, *PLATFORM, *queue()],
    "aks-gpu": [*AKS_BASE, *GPU_SELF_MANAGED, *MIG, *PLATFORM, *queue("taugrid-a100")],
    "aks-h200": [*AKS_BASE, *GPU_SELF_MANAGED, *PLATFORM, *queue("taugrid-h200")],
    "ci-preview": [
        *AKS_BASE,
        *GPU_SELF_MANAGED,
        *MIG,
        *ADX,
        *RECORDER,
        *PLATFORM,
        *queue("taugrid-a100"),
        *BOOTSTRAP,
    ],
}
STACKS = sorted(EXPECTED_RESOURCES)


def test_stacks_dir_holds_exactly_the_documented_stacks():
    found = sorted(path.name for path in (ROOT / "stacks").glob("Pulumi.*.yaml"))
    assert found == [f"Pulumi.{stack}.yaml" for stack in STACKS]


@pytest.mark.parametrize("stack", ["aks-cpu", "aks-gpu", "aks-h200"])
def test_aks_stacks_commit_no_subscription(stack):
    with pytest.raises(StackConfigError) as caught:
        parse_stack_config(stack_settings(stack))
    assert caught.value.all_problems == [MSG_SUBSCRIPTION_REQUIRED]


@pytest.mark.parametrize("stack", STACKS)
def test_stack_files_hold_no_secrets(stack):
    text = (ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()
    assert "secure:" not in text
    assert "encryptionsalt" not in text


@pytest.mark.parametrize("stack", STACKS)
def test_stack_registers_exactly_the_expected_resources(runs, stack):
    registered = sorted((item.type, item.name) for item in runs(stack).registrations)
    assert registered == sorted(EXPECTED_RESOURCES[stack])


@pytest.mark.parametrize("stack", STACKS)
def test_every_resource_belongs_to_a_component(runs, stack):
    run = runs(stack)
    for item in run.registrations:
        if item.type.startswith("taugrid:infra:") or item.name == "existing-cluster":
            assert run.parent_of(item) is None, f"{item.name} must be top level"
            continue
        parent = run.parent_of(item)
        assert parent is not None and parent.type.startswith("taugrid:infra:"), item.name
        assert item.name.startswith(parent.name + "-"), item.name


@pytest.mark.parametrize("stack", STACKS)
def test_kubernetes_objects_go_through_the_stack_provider(runs, stack):
    run = runs(stack)
    [provider] = run.of_type(K8S_PROVIDER)
    for item in run.registrations:
        if item.type.startswith("kubernetes:"):
            assert item.provider.startswith(provider.urn + "::"), item.name


def test_aks_cluster_is_shaped_for_workload_identity_and_workspace_rbac(runs):
    cluster = runs("aks-gpu").one(AKS).inputs
    assert cluster["resourceName"] == "taugrid-aks-gpu"
    assert cluster["dnsPrefix"] == "taugrid-aks-gpu"
    assert cluster["resourceGroupName"] == "rg-taugrid-aks-gpu"
    assert cluster["oidcIssuerProfile"] == {"enabled": True}
    assert cluster["securityProfile"] == {"workloadIdentity": {"enabled": True}}
    assert cluster["aadProfile"] == {
        "managed": True,
        "enableAzureRBAC": False,
        "tenantID": CALLER_TENANT,
        "adminGroupObjectIDs": [],
    }
    assert cluster["sku"] == {"name": "Base", "tier": "Standard"}
    assert cluster["disableLocalAccounts"] is False
    assert cluster["identity"] == {"type": "SystemAssigned"}
    assert cluster["networkProfile"]["networkPlugin"] == "azure"
    assert cluster["networkProfile"]["loadBalancerSku"] == "standard"
    [system] = cluster["agentPoolProfiles"]
    assert system["name"] == "system"
    assert system["mode"] == "System"
    assert system["count"] == 2
    assert system["vmSize"] == "Standard_D4ds_v6"
    assert system["upgradeSettings"] == {"maxSurge": "10%"}


def test_the_admin_kubeconfig_only_travels_as_a_secret(runs):
    provider = runs("aks-gpu").one(K8S_PROVIDER)
    assert provider.secret_inputs == {"kubeconfig"}
    assert provider.inputs["kubeconfig"]["value"] == MOCK_KUBECONFIG  # decoded from base64


def test_an_explicit_tenant_replaces_the_callers(runs):
    assert runs("ci-preview").one(AKS).inputs["aadProfile"]["tenantID"] == ZERO_ID


def test_resource_group_ignores_tag_drift(runs):
    group = runs("aks-cpu").one(RG)
    assert group.inputs["resourceGroupName"] == "rg-taugrid-aks-cpu"
    assert group.options["ignore_changes"] == ["tags"]


def test_a100_pool_carries_the_gpu_taint_labels_and_driver(runs):
    pool = runs("aks-gpu").one(POOL).inputs
    assert pool["agentPoolName"] == "gpu"
    assert pool["resourceName"] == "taugrid-aks-gpu"
    assert pool["vmSize"] == "Standard_NC24ads_A100_v4"
    assert pool["count"] == 1
    assert pool["enableAutoScaling"] is False
    assert "minCount" not in pool and "maxCount" not in pool
    assert pool["mode"] == "User"
    assert pool["osSKU"] == "Ubuntu"
    assert pool["gpuProfile"] == {"driver": "Install"}
    assert pool["nodeTaints"] == ["sku=gpu:NoSchedule"]
    assert pool["nodeLabels"] == {
        "aks.azure.com/gpu-sku": "a100-pcie-1g",
        "tau.azure.com/gpu-class": "a100-80gb",
        keys.KUEUE_GPU_SERIES: "nc24ads-a100-v4",
    }
    assert pool["upgradeSettings"] == {"maxSurge": "10%"}
    assert pool["tags"] == {"scenario": "taugrid-aks-gpu"}


def test_h200_pool_and_quota(runs):
    run = runs("aks-h200")
    pool = run.one(POOL).inputs
    assert pool["agentPoolName"] == "h200"
    assert pool["vmSize"] == "Standard_ND96isr_H200_v5"
    assert pool["nodeLabels"]["tau.azure.com/gpu-class"] == "h200-141gb"
    values = run.named("platform-release").inputs["values"]
    [flavor] = values["baselineQueue"]["gpu"]["flavors"]
    assert flavor["resources"] == [{"name": "nvidia.com/gpu", "nominalQuota": "8"}]
    assert values["gpu-monitoring"]["gpuSkus"] == {
        "h200": {"instanceTypes": ["Standard_ND96isr_H200_v5"], "numGpus": 8}
    }
    assert run.outputs["gpu_quota"] == 8


@pytest.mark.parametrize("stack", ["aks-gpu", "aks-h200"])
def test_gpu_pool_labels_match_the_controller_catalog(runs, stack):
    """The controller rewrites node labels from its catalog: a stack's pool must agree with it,
    or its nodes stop matching their ResourceFlavor after the first reconcile."""
    controller = ROOT / "charts" / "taugrid" / "charts" / "tau-core-controller" / "values.yaml"
    catalog = yaml.safe_load(controller.read_text())
    pairs = {
        (rule["labels"].get(keys.KUEUE_GPU_SERIES), rule["labels"].get(keys.GPU_CLASS))
        for rule in _label_rules(catalog)
    }
    labels = runs(stack).one(POOL).inputs["nodeLabels"]
    assert (labels[keys.KUEUE_GPU_SERIES], labels[keys.GPU_CLASS]) in pairs


def _label_rules(values):
    """Every `labels` rule in the controller chart's node-label catalog, wherever it nests."""
    if isinstance(values, dict):
        if isinstance(values.get("labels"), dict) and keys.KUEUE_GPU_SERIES in values["labels"]:
            yield values
        for value in values.values():
            yield from _label_rules(value)
    elif isinstance(values, list):
        for value in values:
            yield from _label_rules(value)


def test_autoscaled_pool_sets_bounds_instead_of_a_count():
    run = run_stack(
        {
            "subscription_id": SUBSCRIPTION,
            "gpu_auto_scaling_enabled": True,
            "normalize_gpu_mig": False,
            "gpu_min_count": 0,
            "gpu_max_count": 3,
        }
    )
    pool = run.one(POOL).inputs
    assert (pool["enableAutoScaling"], pool["minCount"], pool["maxCount"]) == (True, 0, 3)
    assert "count" not in pool
    assert run.outputs["gpu_quota"] == 3
    assert not [item for item in run.registrations if item.name == "gpu-mig-normalizer"]


def test_managed_gpu_preview_tags_the_pool_and_installs_no_gpu_stack():
    run = run_stack({"subscription_id": SUBSCRIPTION, "gpu_stack_mode": "aks_managed_preview"})
    pool = run.one(POOL).inputs
    assert pool["tags"] == {"scenario": "taugrid-aks", "EnableManagedGPUExperience": "true"}
    names = {item.name for item in run.registrations}
    assert "gpu-device-plugin" not in names
    assert "gpu-dcgm-exporter" not in names
    # The pool's own host DCGM exporter stays the GPU monitoring source (chart default).
    values = run.named("platform-release").inputs["values"]
    assert "dcgmHealth" not in values["gpu-monitoring"]
    release = run.named("platform-release")
    assert run.depends_on(release, run.named("gpu-mig-normalizer"))
    assert run.depends_on(release, run.one(POOL))


def test_self_managed_gpu_stack_is_the_device_plugin_and_the_dcgm_exporter(runs):
    run = runs("aks-gpu")
    plugin = run.named("gpu-device-plugin").inputs
    assert plugin["metadata"] == {
        "name": "nvidia-device-plugin-daemonset",
        "namespace": "kube-system",
    }
    pod = plugin["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"kubernetes.azure.com/agentpool": "gpu"}
    assert {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"} in pod[
        "tolerations"
    ]
    dcgm = run.named("gpu-dcgm-exporter").inputs
    assert (dcgm["name"], dcgm["namespace"], dcgm["chart"], dcgm["version"]) == (
        "dcgm-exporter",
        "dcgm-exporter",
        "dcgm-exporter",
        "4.8.3",
    )
    assert dcgm["repositoryOpts"] == {"repo": "https://nvidia.github.io/dcgm-exporter/helm-charts"}
    assert dcgm["createNamespace"] is True
    assert dcgm["values"] == {
        "nodeSelector": {"kubernetes.azure.com/agentpool": "gpu"},
        "tolerations": [
            {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
        ],
        "podAnnotations": {"adx-mon/scrape": "true"},
        "service": {"internalTrafficPolicy": "Local"},
        "kubernetes": {"enablePodLabels": False},
        "serviceMonitor": {"enabled": False},
    }
    monitoring = run.named("platform-release").inputs["values"]["gpu-monitoring"]
    assert monitoring["dcgmHealth"] == {
        "source": "exporter",
        "exporterUrl": "http://dcgm-exporter.dcgm-exporter.svc:9400/metrics",
    }


def test_mig_normaliser_runs_privileged_on_the_gpu_pool_only(runs):
    pod = runs("aks-gpu").named("gpu-mig-normalizer").inputs["spec"]["template"]["spec"]
    assert pod["hostPID"] is True
    assert pod["nodeSelector"] == {"kubernetes.azure.com/agentpool": "gpu"}
    [normalize] = pod["initContainers"]
    assert normalize["securityContext"] == {"privileged": True}
    assert "nvidia-smi -mig 0" in normalize["command"][-1]


def test_gpu_stack_install_order(runs):
    run = runs("aks-gpu")
    pool, plugin = run.one(POOL), run.named("gpu-device-plugin")
    mig, dcgm = run.named("gpu-mig-normalizer"), run.named("gpu-dcgm-exporter")
    release = run.named("platform-release")
    assert run.depends_on(plugin, pool)
    assert run.depends_on(mig, plugin)  # MIG is verified with the device plugin running
    assert run.depends_on(dcgm, mig)
    for step in (pool, plugin, mig, dcgm, run.one(AKS)):
        assert run.depends_on(release, step), step.name
    assert not run.depends_on(pool, release)


def test_cpu_stack_has_no_gpu_anything(runs):
    run = runs("aks-cpu")
    values = run.named("platform-release").inputs["values"]
    assert values["baselineQueue"]["gpu"] == {"enabled": False}
    assert values["components"]["gpuMonitoring"] == {"enabled": False}
    assert "gpu-monitoring" not in values
    assert run.outputs["gpu_node_pool_name"] is None
    assert run.outputs["gpu_quota"] == 0


def test_adx_cluster_name_databases_and_retention(runs):
    run = runs("ci-preview")
    name = adx_cluster_name(ZERO_ID, "rg-taugrid-ci-preview", "taugrid-ci-preview")
    cluster = run.one(KUSTO)
    assert cluster.inputs["clusterName"] == name
    assert cluster.inputs["sku"] == {
        "name": "Dev(No SLA)_Standard_D11_v2",
        "tier": "Basic",
        "capacity": 1,
    }
    assert cluster.inputs["enableAutoStop"] is True
    assert cluster.inputs["enableStreamingIngest"] is True
    assert cluster.options["ignore_changes"] == ["clusterName"]
    databases = {item.inputs["databaseName"]: item.inputs for item in run.of_type(DATABASE)}
    assert sorted(databases) == ["Audit", "CostTracking", "Logs", "Metrics"]
    for database in databases.values():
        assert (database["softDeletePeriod"], database["hotCachePeriod"]) == ("P7D", "P1D")
        assert database["clusterName"] == name


def test_identities_federate_exact_service_account_subjects(runs):
    run = runs("ci-preview")
    issuer = issuer_url("taugrid-ci-preview")
    credentials = {
        item.inputs["federatedIdentityCredentialResourceName"]: item.inputs
        for item in run.of_type(FIC)
    }
    assert {name: (c["resourceName"], c["subject"]) for name, c in credentials.items()} == {
        "tau-portal": ("taugrid-portal-adx", "system:serviceaccount:tau-system:tau-portal"),
        "adx-mon-ingestor": ("taugrid-adx-mon", "system:serviceaccount:adx-mon:adx-mon-ingestor"),
        "adx-mon-alerter": ("taugrid-adx-mon", "system:serviceaccount:adx-mon:adx-mon-alerter"),
        "tau-lifecycle-recorder": (
            "taugrid-lifecycle-recorder",
            "system:serviceaccount:tau-system:tau-lifecycle-recorder",
        ),
    }
    for credential in credentials.values():
        assert credential["issuer"] == issuer
        assert credential["audiences"] == ["api://AzureADTokenExchange"]
    for item in run.of_type(FIC):
        assert run.depends_on(item, run.one(AKS))


def test_database_grants_are_least_privilege_by_client_id(runs):
    grants = {
        item.inputs["principalAssignmentName"]: (
            item.inputs["databaseName"],
            item.inputs["role"],
            item.inputs["principalId"],
            item.inputs["principalType"],
            item.inputs["tenantId"],
        )
        for item in runs("ci-preview").of_type(GRANT)
    }
    portal, adx_mon = client_id("taugrid-portal-adx"), client_id("taugrid-adx-mon")
    recorder = client_id("taugrid-lifecycle-recorder")
    assert grants == {
        "taugrid-adx-mon-metrics": ("Metrics", "Admin", adx_mon, "App", IDENTITY_TENANT),
        "taugrid-adx-mon-logs": ("Logs", "Admin", adx_mon, "App", IDENTITY_TENANT),
        "taugrid-adx-mon-costtracking": ("CostTracking", "Admin", adx_mon, "App", IDENTITY_TENANT),
        "taugrid-adx-mon-audit": ("Audit", "Admin", adx_mon, "App", IDENTITY_TENANT),
        "taugrid-portal-viewer": ("Metrics", "Viewer", portal, "App", IDENTITY_TENANT),
        "taugrid-portal-cost-viewer": ("CostTracking", "Viewer", portal, "App", IDENTITY_TENANT),
        "taugrid-lifecycle-recorder-ingestor": (
            "Metrics",
            "Ingestor",
            recorder,
            "App",
            IDENTITY_TENANT,
        ),
    }


def test_adx_alone_does_not_enable_the_lifecycle_recorder():
    run = run_stack({"subscription_id": SUBSCRIPTION, "enable_adx": True})
    names = {item.name for item in run.registrations}
    assert "lifecycle-recorder-identity" not in names
    assert "adx-taugrid-lifecycle-recorder-ingestor" not in names
    values = run.named("platform-release").inputs["values"]
    core = values["taugrid-core"]
    assert "lifecycleRecorder" not in core
    # The log offload connection needs ADX (and adx-mon), not the recorder.
    assert values["tau-core-controller"]["logOffload"]["kusto"] == {
        "endpoint": run.outputs["adx_endpoint"],
        "database": "Logs",
        "cluster": run.outputs["cluster_name"],
    }
    assert core["portal"]["serviceAccount"]["annotations"] == {
        "azure.workload.identity/client-id": client_id("taugrid-portal-adx")
    }


def test_platform_waits_for_identities_grants_and_the_recorder_namespace(runs):
    run = runs("ci-preview")
    release = run.named("platform-release")
    for item in [*run.of_type(FIC), *run.of_type(GRANT), run.one(NAMESPACE)]:
        assert run.depends_on(release, item), item.name
    namespace = run.one(NAMESPACE)
    assert namespace.inputs["metadata"] == {"name": "taugrid-default"}
    assert namespace.options["retain_on_delete"] is True


def test_platform_release_is_the_taugrid_release_in_tau_system(runs):
    release = runs("aks-gpu").named("platform-release").inputs
    assert release["name"] == "taugrid"
    assert release["namespace"] == "tau-system"
    assert release["createNamespace"] is True
    # Relative to the program directory (Pulumi.yaml's `main`), where the engine starts providers.
    assert (ROOT / "infra" / release["chart"]).resolve() == ROOT / "charts" / "taugrid-bundle"
    assert release["timeout"] == 1200
    assert release["dependencyUpdate"] is True
    assert "version" not in release  # a checkout chart carries its version in Chart.yaml


def test_what_the_checkout_release_fetches_leaves_the_work_tree_clean():
    """dependencyUpdate writes the Kueue/KubeRay archives and Chart.lock into the checkout."""
    fetched = [
        "charts/taugrid-bundle/charts/kueue-0.18.2.tgz",
        "charts/taugrid-bundle/charts/kuberay-operator-1.6.2.tgz",
        "charts/taugrid-bundle/Chart.lock",
    ]
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", *fetched],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ignored.stdout.split() == fetched
    kept = subprocess.run(
        ["git", "check-ignore", "--no-index", "charts/taugrid/charts/taugrid-core/Chart.yaml"],
        cwd=ROOT,
        check=False,
    )
    assert kept.returncode == 1  # the first-party sub-charts stay tracked


def test_a_repository_chart_is_installed_at_taugrid_version(monkeypatch):
    # The registry is unreachable here: record which chart the queue would be rendered from.
    rendered = []
    monkeypatch.setattr(
        "infra.platform.render_queue_objects",
        lambda chart, version, values: rendered.append((chart, version)) or [],
    )
    run = run_stack(
        {
            "subscription_id": SUBSCRIPTION,
            "taugrid_chart": "oci://mcr.microsoft.com/aks/ai-runtime/helm/taugrid",
            "taugrid_version": "0.4.2",
        }
    )
    release = run.named("platform-release").inputs
    assert release["chart"] == "oci://mcr.microsoft.com/aks/ai-runtime/helm/taugrid"
    assert release["version"] == "0.4.2"
    assert release["dependencyUpdate"] is False
    assert rendered == [("oci://mcr.microsoft.com/aks/ai-runtime/helm/taugrid", "0.4.2")]


def test_platform_values_wire_adx_and_the_workload_identities(runs):
    run = runs("ci-preview")
    values = run.named("platform-release").inputs["values"]
    endpoint = kusto_uri(
        adx_cluster_name(ZERO_ID, "rg-taugrid-ci-preview", "taugrid-ci-preview"), "swedencentral"
    )
    core = values["taugrid-core"]
    assert core["portal"] == {
        "enabled": True,
        "cluster": "taugrid-ci-preview",
        "serviceAccount": {
            "create": True,
            "name": "tau-portal",
            "annotations": {"azure.workload.identity/client-id": client_id("taugrid-portal-adx")},
        },
        "rbac": {"create": True},
        # The recorder ingests into ADX, so the Portal's run history reads the same table.
        "runHistory": {"enabled": True},
        "source": "kusto",
        "kusto": {"endpoint": endpoint, "database": "Metrics", "table": "TauExpRunLifecycle"},
    }
    assert core["lifecycleRecorder"] == {
        "enabled": True,
        "resourceName": "tau-lifecycle-recorder",
        "targetNamespace": "taugrid-default",
        "cluster": "taugrid-ci-preview",
        "workloadIdentity": {"enabled": True},
        "kusto": {"endpoint": endpoint, "database": "Metrics", "table": "TauExpRunLifecycle"},
        "serviceAccount": {
            "annotations": {
                "azure.workload.identity/client-id": client_id("taugrid-lifecycle-recorder")
            }
        },
        "rbac": {"create": True},
    }
    # Every workspace namespace gets the Logs database as its `tau logs` offload connection;
    # the rows' Cluster is the AKS name adx-mon is installed with.
    assert values["tau-core-controller"] == {
        "logOffload": {
            "kusto": {"endpoint": endpoint, "database": "Logs", "cluster": "taugrid-ci-preview"}
        }
    }
    assert values["components"] == {"gpuMonitoring": {"enabled": True}}


def test_bootstrap_workspace_waits_for_the_platform_and_its_own_readiness(runs):
    run = runs("ci-preview")
    workspace = run.one(WORKSPACE)
    assert run.depends_on(workspace, run.named("platform-release"))
    # Its LocalQueue needs the ClusterQueue, which the stack applies after the release.
    assert run.depends_on(workspace, run.named("platform-queue-clusterqueue-jobqueue"))
    assert workspace.options["retain_on_delete"] is True
    assert workspace.inputs["metadata"] == {
        "name": "taugrid-default",
        "namespace": "tau-system",
        "annotations": {
            "pulumi.com/waitFor": "jsonpath={.status.phase}=Ready",
            "pulumi.com/timeoutSeconds": "1200",
        },
    }
    assert workspace.inputs["spec"] == {
        "authorization": {"mode": "workspace-rbac"},
        "principalRef": {"provider": "entra", "name": ZERO_ID},
        "kubernetesSubject": {"kind": "Group", "name": ZERO_ID},
        "role": "tau-researcher-v1",
        "target": {"namespace": "taugrid-default", "createNamespace": True},
        "queue": "jobqueue",
        "defaults": {"outputRoot": "/data/projects/taugrid-default/runs", "priority": "normal"},
    }


def test_dev_stack_installs_onto_the_existing_context_without_azure(runs):
    run = runs("dev")
    assert not [item for item in run.registrations if item.type.startswith("azure-native:")]
    provider = run.one(K8S_PROVIDER).inputs
    assert provider["context"] == "kubernetes-admin@taugrid-local"
    values = run.named("platform-release").inputs["values"]
    assert values["components"]["kueue"] == {"enabled": False}
    assert values["components"]["kuberayOperator"] == {"enabled": False}
    assert values["baselineQueue"]["enabled"] is False
    assert values["taugrid-core"]["portal"]["enabled"] is True
    release = run.named("platform-release").inputs
    assert (ROOT / "infra" / release["chart"]).resolve() == ROOT / "charts" / "taugrid"
    assert release["dependencyUpdate"] is False, "nothing to fetch without the operators"


@pytest.mark.parametrize("stack", STACKS)
def test_outputs_carry_the_documented_names(runs, stack):
    assert set(runs(stack).outputs) == OUTPUT_NAMES


def test_aks_outputs(runs):
    outputs = runs("aks-gpu").outputs
    assert outputs == {
        "resource_group_name": "rg-taugrid-aks-gpu",
        "cluster_name": "taugrid-aks-gpu",
        "get_credentials_command": (
            f"az aks get-credentials --admin --subscription {SUBSCRIPTION} "
            "--resource-group rg-taugrid-aks-gpu --name taugrid-aks-gpu --overwrite-existing"
        ),
        "portal_port_forward_command": PORT_FORWARD,
        "adx_endpoint": None,
        "adx_cluster_name": None,
        "gpu_node_pool_name": "gpu",
        "gpu_quota": 1,
    }


def test_adx_outputs(runs):
    outputs = runs("ci-preview").outputs
    name = adx_cluster_name(ZERO_ID, "rg-taugrid-ci-preview", "taugrid-ci-preview")
    assert outputs["adx_cluster_name"] == name
    assert outputs["adx_endpoint"] == kusto_uri(name, "swedencentral")


def test_dev_outputs(runs):
    outputs = runs("dev").outputs
    assert outputs["portal_port_forward_command"] == (
        "kubectl --context kubernetes-admin@taugrid-local -n tau-system "
        "port-forward service/tau-portal 18080:80"
    )
    assert outputs["resource_group_name"] is None
    assert outputs["get_credentials_command"] is None


def test_invalid_config_fails_before_any_resource_is_registered():
    monitor = RecordingMonitor(AzureMocks())
    with pytest.raises(pulumi.RunError) as caught:
        run_stack({"subscription_id": SUBSCRIPTION, "cluster_name": "9"}, monitor=monitor)
    assert str(caught.value) == f"invalid stack configuration: {MSG_CLUSTER_NAME}"
    assert monitor.registrations == []


@pytest.mark.parametrize("stack", ["aks-cpu", "aks-gpu", "aks-h200", "ci-preview"])
def test_the_queue_waits_for_the_release_that_installs_kueue(runs, stack):
    """One `pulumi up` on a fresh cluster: the release comes up without its queue objects (Kueue's
    webhooks must serve first), and the queue objects follow it; destroy runs in reverse, so
    they are drained while Kueue still runs."""
    run = runs(stack)
    release = run.named("platform-release")
    values = release.inputs["values"]
    assert values["components"].get("kueue", {}).get("enabled", True) is not False
    assert values["baselineQueue"]["enabled"] is False
    objects = [item for item in run.registrations if item.name.startswith("platform-queue-")]
    assert objects
    for item in objects:
        assert run.depends_on(item, release), item.name
        labels = item.inputs["metadata"]["labels"]
        assert labels["app.kubernetes.io/managed-by"] == "pulumi"
        assert labels["app.kubernetes.io/instance"] == "taugrid"
        assert item.options["delete_timeout"] == "600s"  # Kueue may hold a finalizer a while
    cluster_queue = run.named("platform-queue-clusterqueue-jobqueue")
    flavors = [item for item in objects if item.type == FLAVOR]
    topology = run.named("platform-queue-topology-default-node-topology")
    for flavor in flavors:
        assert run.depends_on(cluster_queue, flavor)
        assert run.depends_on(flavor, topology)
    assert not run.depends_on(topology, cluster_queue)
    flavor_names = {item.inputs["metadata"]["name"] for item in flavors}
    referenced = {
        flavor["name"]
        for group in cluster_queue.inputs["spec"]["resourceGroups"]
        for flavor in group["flavors"]
    }
    assert referenced == flavor_names


def test_dev_queue_stays_with_the_cluster_that_runs_kueue(runs):
    """Kueue is not in the dev release: nothing to wait for, and no queue objects of ours."""
    run = runs("dev")
    assert not [item for item in run.registrations if item.name.startswith("platform-queue")]
