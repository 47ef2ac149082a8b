"""What the distribution renders: the baseline queue, the controller, RBAC, the guard, Portal."""

from __future__ import annotations

from pathlib import Path

import yaml

from tau.cluster.chart import DEFAULT_CHART_VERSION

from .conftest import CHART

QUEUE_KINDS = {
    "Topology",
    "ResourceFlavor",
    "ClusterQueue",
    "PriorityClass",
    "WorkloadPriorityClass",
}


def _queue_objects(objects):
    return [o for o in objects if o["kind"] in QUEUE_KINDS]


def _one(objects, kind, name=None):
    found = [
        o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    ]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} rendered"
    return found[0]


def test_default_baseline_queue_renders_eight_objects(render):
    objects = _queue_objects(render())
    assert sorted((o["kind"], o["metadata"]["name"]) for o in objects) == sorted(
        [
            ("Topology", "default-node-topology"),
            ("ResourceFlavor", "taugrid-default-cpu"),
            ("ResourceFlavor", "taugrid-default-gpu"),
            ("ClusterQueue", "jobqueue"),
            ("PriorityClass", "taugrid-default"),
            ("PriorityClass", "taugrid-priority"),
            ("WorkloadPriorityClass", "taugrid-default"),
            ("WorkloadPriorityClass", "taugrid-priority"),
        ]
    )


def test_cpu_flavor_is_not_topology_aware_and_gpu_flavor_is(render):
    objects = render()
    cpu = _one(objects, "ResourceFlavor", "taugrid-default-cpu")
    gpu = _one(objects, "ResourceFlavor", "taugrid-default-gpu")
    assert "topologyName" not in cpu["spec"] and "annotations" not in cpu["metadata"]
    assert gpu["spec"]["topologyName"] == "default-node-topology"
    assert gpu["spec"]["nodeTaints"] == [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]
    assert "tolerations" not in gpu["spec"]
    assert gpu["metadata"]["annotations"] == {
        "kueue.x-k8s.io/podset-required-topology": "kubernetes.io/hostname"
    }


def test_cluster_queue_has_one_group_with_zero_gpu_quota_on_the_cpu_flavor(render):
    queue = _one(render(), "ClusterQueue")
    spec = queue["spec"]
    assert spec["queueingStrategy"] == "BestEffortFIFO"
    assert spec["preemption"] == {"withinClusterQueue": "LowerPriority"}
    assert spec["namespaceSelector"] == {
        "matchExpressions": [{"key": "tau.azure.com/workspace", "operator": "Exists"}]
    }
    assert "admissionChecks" not in spec and "admissionChecksStrategy" not in spec
    (group,) = spec["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]
    cpu, gpu = group["flavors"]
    assert cpu["resources"] == [
        {"name": "cpu", "nominalQuota": "100000"},
        {"name": "memory", "nominalQuota": "100Ti"},
        {"name": "nvidia.com/gpu", "nominalQuota": "0"},
    ]
    assert gpu["resources"][-1] == {"name": "nvidia.com/gpu", "nominalQuota": "1000"}
    labels = queue["metadata"]["labels"]
    assert labels["app.kubernetes.io/instance"] == "t"
    assert labels["app.kubernetes.io/part-of"] == "taugrid"


def test_gpu_disabled_renders_seven_objects_and_a_cpu_only_queue(render):
    objects = _queue_objects(render("baselineQueue.gpu.enabled=false"))
    assert len(objects) == 7
    (group,) = _one(objects, "ClusterQueue")["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory"]
    assert [f["name"] for f in group["flavors"]] == ["taugrid-default-cpu"]


def test_baseline_queue_disabled_renders_no_queue_objects(render):
    assert _queue_objects(render("baselineQueue.enabled=false")) == []


def test_custom_topology_level_renders_above_the_hostname_leaf(render):
    topology = _one(
        render("baselineQueue.topology.requiredLevel=tau.azure.com/network-domain"), "Topology"
    )
    assert topology["spec"]["levels"] == [
        {"nodeLabel": "tau.azure.com/network-domain"},
        {"nodeLabel": "kubernetes.io/hostname"},
    ]


def test_shared_local_queues_are_rendered_in_listed_namespaces(render):
    queue = _one(render("baselineQueue.localQueueNamespaces={research}"), "LocalQueue")
    assert queue["metadata"]["namespace"] == "research"
    assert queue["spec"] == {"clusterQueue": "jobqueue"}


def test_every_system_workload_follows_the_release_namespace(render):
    objects = render(namespace="platform-x")
    namespaced = [o for o in objects if "namespace" in o["metadata"]]
    assert {o["metadata"]["namespace"] for o in namespaced} == {"platform-x"}
    assert {"Deployment", "DaemonSet", "ServiceAccount", "Service"} <= {
        o["kind"] for o in namespaced
    }


def test_controller_deployment_runs_the_python_controller_in_the_release_namespace(render):
    deployment = _one(render(namespace="platform-x"), "Deployment", "tau-core-controller")
    assert deployment["spec"]["selector"] == {
        "matchLabels": {"app.kubernetes.io/name": "tau-core-controller"}
    }
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["python", "-m", "tau.controller"]
    assert container["args"] == [
        "--system-namespace=platform-x",
        "--leader-elect",
        "--health-probe-bind-address=:8081",
        "--metrics-bind-address=:8080",
    ]  # no --pod-security-enforce: the controller's default level (restricted) applies
    assert (
        container["image"]
        == f"mcr.microsoft.com/aks/ai-runtime/tau-core-controller:{DEFAULT_CHART_VERSION}"
    )
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}


def test_controller_image_digest_wins_over_the_tag(render):
    digest = "sha256:" + "a" * 64
    deployment = _one(
        render(f"tau-core-controller.image.digest={digest}"), "Deployment", "tau-core-controller"
    )
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == f"mcr.microsoft.com/aks/ai-runtime/tau-core-controller@{digest}"


def test_tau_cluster_carries_the_vm_size_catalog_and_profile_catalog(render):
    spec = _one(render(), "TauCluster", "cluster")["spec"]
    assert spec["managementMode"] == "Reconcile"
    assert spec["queues"]["ownership"] == "External"
    rules = spec["nodes"]["labelRules"]
    assert len(rules) == 14
    assert rules[0] == {
        "match": {"vmSizes": ["Standard_NV6ads_A10_v5"]},
        "labels": {
            "kueue.azure.com/gpu-series": "nvads-a10-v5",
            "tau.azure.com/gpu-class": "a10-4gb",
        },
    }
    assert rules[-1]["labels"]["tau.azure.com/gpu-class"] == "gb300-288gb"
    h200 = [r for r in rules if "Standard_ND96isr_H200_v5" in r["match"]["vmSizes"]]
    assert h200[0]["labels"] == {
        "kueue.azure.com/gpu-series": "nd-h200-v5",
        "tau.azure.com/gpu-class": "h200-141gb",
    }
    profiles = spec["workloadProfiles"]
    assert len(profiles) == 16
    assert {p["executionTarget"] for p in profiles} == {"singleCluster"}
    # One CPU profile a default install admits without a team or lane, in the default
    # workspace namespace only; every GPU profile stays team- and lane-scoped.
    cpu = [p for p in profiles if p["gpusPerWorker"] == 0]
    assert [(p["name"], p["applicability"]) for p in cpu] == [
        ("azure.default.cpu", {"namespaces": ["taugrid-default"]})
    ]
    assert all(
        p["applicability"].get("teams") and p["applicability"].get("lanes")
        for p in profiles
        if p["gpusPerWorker"]
    )


def test_extra_node_label_rules_are_appended_after_the_catalog(render):
    spec = _one(
        render(
            "tau-core-controller.tauCluster.extraNodeLabelRules[0].match.vmSizes[0]=Standard_Custom_H200_v5",
            "tau-core-controller.tauCluster.extraNodeLabelRules[0].labels.tau\\.azure\\.com/gpu-class=h200-141gb",
        ),
        "TauCluster",
    )["spec"]
    rules = spec["nodes"]["labelRules"]
    assert len(rules) == 15
    assert rules[-1]["match"]["vmSizes"] == ["Standard_Custom_H200_v5"]


def test_researcher_cluster_roles_are_shipped_and_bindable_by_the_controller(render):
    objects = render()
    researcher = _one(objects, "ClusterRole", "tau-researcher-v1")
    assert {
        "apiGroups": ["kueue.x-k8s.io"],
        "resources": ["localqueues", "workloads"],
        "verbs": ["get", "list", "watch"],
    } in researcher["rules"]
    assert {
        "apiGroups": [""],
        "resources": ["services"],
        "verbs": ["create", "get", "list", "watch", "delete", "patch", "update"],
    } in researcher["rules"], "tau run's rendezvous Service and tau serve's endpoint Service"
    serve_verbs = ["create", "get", "list", "watch", "delete", "patch", "update"]
    for group, resource in (
        ("ray.io", "rayservices"),
        ("apps", "deployments"),
        ("autoscaling", "horizontalpodautoscalers"),
    ):
        assert {"apiGroups": [group], "resources": [resource], "verbs": serve_verbs} in researcher[
            "rules"
        ], f"tau serve manages {resource}"
    assert {
        "apiGroups": ["apps"],
        "resources": ["deployments/scale"],
        "verbs": ["get", "patch", "update"],
    } in researcher["rules"], "tau serve scale"
    assert {
        "apiGroups": ["visibility.kueue.x-k8s.io"],
        "resources": ["localqueues/pendingworkloads"],
        "verbs": ["get"],
    } in researcher["rules"], "tau run status shows a waiting run's queue position"
    assert {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]} in researcher[
        "rules"
    ]
    assert {
        "apiGroups": ["secrets-store.csi.x-k8s.io"],
        "resources": ["secretproviderclasses"],
        "verbs": ["create", "get", "list", "delete"],
    } in researcher["rules"], "a managed workflow's runtime.env_kv renders its SecretProviderClass"
    assert not any(
        "pods" in rule["resources"] and "create" in rule["verbs"] for rule in researcher["rules"]
    ), "researchers must not create bare pods: that would bypass Kueue"
    assert not any("pods/exec" in rule["resources"] for rule in researcher["rules"]), (
        "the driver log needs no exec into pods"
    )
    reader = _one(objects, "ClusterRole", "tau-clusterqueue-reader-v1")
    assert reader["rules"] == [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"], "verbs": ["get"]},
        {
            "apiGroups": ["tau.azure.com"],
            "resources": ["clusters"],
            "resourceNames": ["cluster"],
            "verbs": ["get"],
        },
    ]
    controller = _one(objects, "ClusterRole", "tau-core-controller")
    bind = [r for r in controller["rules"] if r["verbs"] == ["bind"]]
    assert bind == [
        {
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["clusterroles"],
            "verbs": ["bind"],
            "resourceNames": ["tau-researcher-v1", "tau-clusterqueue-reader-v1"],
        }
    ]


def test_quota_guard_is_fail_closed_and_narrow(render):
    objects = render()
    policy = _one(objects, "ValidatingAdmissionPolicy", "tau-quota-approval-guard")
    assert policy["spec"]["failurePolicy"] == "Fail"
    assert policy["spec"]["matchConstraints"]["resourceRules"] == [
        {
            "apiGroups": ["tau.azure.com"],
            "apiVersions": ["v1alpha1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["quotarequests"],
        }
    ]
    binding = _one(objects, "ValidatingAdmissionPolicyBinding", "tau-quota-approval-guard")
    assert binding["spec"] == {
        "policyName": "tau-quota-approval-guard",
        "validationActions": ["Deny"],
    }


PORTAL_VALUES = (
    "taugrid-core.portal.cluster=aks-1",
    "taugrid-core.portal.workspace=shared-research",
    "taugrid-core.portal.workloadNamespace=research",
    "taugrid-core.portal.jobs.scopeMode=workspace",
    "taugrid-core.portal.runHistory.enabled=true",
    "taugrid-core.portal.storeClaim=taugrid-store",
)


def _portal_rules(objects) -> list[tuple[str, str, dict]]:
    return [
        (o["kind"], o["metadata"].get("namespace", ""), rule)
        for o in objects
        if o["kind"] in ("Role", "ClusterRole")
        and o["metadata"]["labels"].get("app.kubernetes.io/component") == "portal"
        for rule in o["rules"]
    ]


def test_portal_container_runs_portal_serve_with_the_documented_values(render):
    objects = render(*PORTAL_VALUES)
    deployment = _one(objects, "Deployment", "tau-portal")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["taugrid-portal", "portal", "serve"]
    args = container["args"]
    for flag in (
        "--addr=0.0.0.0:8080",
        "--workspace=shared-research",
        "--cluster=aks-1",
        "--namespace=research",
        "--jobs-scope-mode=workspace",
        "--run-history-enabled",
        "--source=local",
        "--allow-host=tau-portal.tau-system.svc",
        "--store=/var/lib/taugrid/store",
    ):
        assert flag in args
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert volumes["store"]["persistentVolumeClaim"]["claimName"] == "taugrid-store"
    assert _one(objects, "Service", "tau-portal")["spec"]["type"] == "ClusterIP"
    assert not [o for o in render("taugrid-core.portal.enabled=false") if o["kind"] == "Service"]


def test_portal_rbac_is_read_only_least_privilege_and_never_secrets(render):
    rules = _portal_rules(render(*PORTAL_VALUES))
    assert {verb for _, _, rule in rules for verb in rule["verbs"]} <= {"get", "list", "watch"}
    assert not [r for _, _, r in rules if "secrets" in r["resources"] or "*" in r["resources"]]
    cluster_wide = {res for kind, _, r in rules if kind == "ClusterRole" for res in r["resources"]}
    assert cluster_wide == {"nodes", "admissionchecks", "clusterqueues"}
    namespaced = {(ns, res) for kind, ns, r in rules if kind == "Role" for res in r["resources"]}
    assert {ns for ns, _ in namespaced} == {"research"}
    assert {res for _, res in namespaced} == {
        "jobs",
        "rayjobs",
        "pods",
        "events",
        "pods/log",
        "resourceclaims",
        "workloads",
        "localqueues",
        "localqueues/pendingworkloads",
    }
    default = {res for _, _, r in _portal_rules(render()) for res in r["resources"]}
    assert default == {"nodes", "admissionchecks"}, "no workspace: only the cluster reads used"


def test_portal_operator_scopes_grant_only_the_reviewed_queue_namespaces(render):
    objects = render(
        "taugrid-core.portal.jobs.scopeMode=operator",
        "taugrid-core.portal.jobs.operatorScopes[0]=vision=team-a/gpu",
    )
    namespaced = {
        (ns, res)
        for kind, ns, r in _portal_rules(objects)
        if kind == "Role"
        for res in r["resources"]
    }
    assert namespaced == {
        ("team-a", "workloads"),
        ("team-a", "localqueues"),
        ("team-a", "localqueues/pendingworkloads"),
    }
    args = _one(objects, "Deployment", "tau-portal")["spec"]["template"]["spec"]["containers"][0]
    assert "--jobs-operator-scope=vision=team-a/gpu" in args["args"]


def test_portal_kueueviz_renders_the_flag_and_only_the_reads_kueueviz_shows(render):
    enabled = (
        "taugrid-core.portal.workloadNamespace=research",
        "taugrid-core.portal.kueueviz.enabled=true",
    )
    objects = render(*enabled)
    args = _one(objects, "Deployment", "tau-portal")["spec"]["template"]["spec"]["containers"][0]
    assert "--kueueviz" in args["args"]
    rules = _portal_rules(objects)
    assert {verb for _, _, rule in rules for verb in rule["verbs"]} <= {"get", "list", "watch"}
    cluster_wide = {res for kind, _, r in rules if kind == "ClusterRole" for res in r["resources"]}
    assert cluster_wide == {
        "nodes", "admissionchecks", "clusterqueues", "resourceflavors", "cohorts",
    }  # fmt: skip
    namespaced = {(ns, res) for kind, ns, r in rules if kind == "Role" for res in r["resources"]}
    assert ("research", "localqueues") in namespaced
    # KueueViz needs no visibility API and no Secret; the Jobs board's reads stay its own.
    assert ("research", "localqueues/pendingworkloads") not in namespaced
    assert not [r for _, _, r in rules if "secrets" in r["resources"] or "*" in r["resources"]]
    off = render("taugrid-core.portal.workloadNamespace=research")
    assert (
        "--kueueviz"
        not in _one(off, "Deployment", "tau-portal")["spec"]["template"]["spec"]["containers"][0][
            "args"
        ]
    )
    assert not {"resourceflavors", "cohorts"} & {
        res for _, _, r in _portal_rules(off) for res in r["resources"]
    }


def test_portal_pod_uses_workload_identity_when_its_service_account_names_a_client(render):
    objects = render(
        "taugrid-core.portal.serviceAccount.annotations.azure\\.workload\\.identity/client-id=abc"
    )
    labels = _one(objects, "Deployment", "tau-portal")["spec"]["template"]["metadata"]["labels"]
    assert labels["azure.workload.identity/use"] == "true"
    plain = _one(render(), "Deployment", "tau-portal")["spec"]["template"]["metadata"]["labels"]
    assert "azure.workload.identity/use" not in plain


def test_portal_reads_run_history_from_adx_with_its_workload_identity(render):
    objects = render(
        *PORTAL_VALUES,
        "taugrid-core.portal.source=kusto",
        "taugrid-core.portal.kusto.endpoint=https://adx.westus.kusto.windows.net",
        "taugrid-core.portal.kusto.database=Telemetry",
        "taugrid-core.portal.serviceAccount.annotations.azure\\.workload\\.identity/client-id=abc",
    )
    template = _one(objects, "Deployment", "tau-portal")["spec"]["template"]
    assert template["metadata"]["labels"]["azure.workload.identity/use"] == "true"
    args = template["spec"]["containers"][0]["args"]
    for flag in (
        "--source=kusto",
        "--run-history-enabled",
        "--kusto-endpoint=https://adx.westus.kusto.windows.net",
        "--kusto-database=Telemetry",
        "--run-history-table=TauExpRunLifecycle",
    ):
        assert flag in args
    account = _one(objects, "ServiceAccount", "tau-portal")
    assert account["metadata"]["annotations"] == {"azure.workload.identity/client-id": "abc"}
    local = _one(render(*PORTAL_VALUES), "Deployment", "tau-portal")["spec"]["template"]["spec"]
    assert not [a for a in local["containers"][0]["args"] if a.startswith("--kusto")]


RECORDER = (
    "taugrid-core.lifecycleRecorder.enabled=true",
    "taugrid-core.lifecycleRecorder.targetNamespace=research",
    "taugrid-core.lifecycleRecorder.cluster=aks-1",
    "taugrid-core.lifecycleRecorder.workspaceId=shared-research",
    "taugrid-core.lifecycleRecorder.storeClaim=taugrid-store",
)


def test_lifecycle_recorder_writes_the_store_with_a_metadata_only_role(render):
    objects = render(*RECORDER)
    role = _one(objects, "Role", "tau-lifecycle-recorder")
    assert role["metadata"]["namespace"] == "research"
    assert [(r["resources"], r["verbs"]) for r in role["rules"]] == [
        (["jobs"], ["get", "list", "watch"]),
        (["rayjobs"], ["get", "list", "watch"]),
        (["workloads"], ["get", "list", "watch"]),
    ]
    container = _one(objects, "Deployment", "tau-lifecycle-recorder")["spec"]["template"]["spec"][
        "containers"
    ][0]
    assert container["command"] == ["tau", "run", "history", "record"]
    assert {
        "--namespace=research",
        "--cluster=aks-1",
        "--workspace-id=shared-research",
        "--store=/var/lib/taugrid/store",
    } <= set(container["args"])
    assert not [a for a in container["args"] if a.startswith("--kusto")]


def test_lifecycle_recorder_to_adx_with_schema_management(render):
    from tau.portal.kusto import lifecycle_script

    objects = render(
        *RECORDER,
        "taugrid-core.lifecycleRecorder.kusto.endpoint=https://adx.westus.kusto.windows.net",
        "taugrid-core.lifecycleRecorder.workloadIdentity.enabled=true",
        "taugrid-core.lifecycleRecorder.serviceAccount.annotations.azure\\.workload\\.identity/client-id=abc",
        "taugrid-core.lifecycleRecorder.schemaManagement.enabled=true",
        "taugrid-core.lifecycleRecorder.schemaManagement.namespace=adx-mon",
    )
    deployment = _one(objects, "Deployment", "tau-lifecycle-recorder")
    assert deployment["spec"]["template"]["metadata"]["labels"]["azure.workload.identity/use"] == (
        "true"
    )
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--kusto-endpoint=https://adx.westus.kusto.windows.net" in args
    command = _one(objects, "ManagementCommand", "taugrid-lifecycle-schema")
    assert command["metadata"]["namespace"] == "adx-mon"
    assert command["spec"]["database"] == "Metrics"
    assert command["spec"]["body"] == lifecycle_script(), "the chart ships the generated KQL"
    schema_role = _one(objects, "Role", "tau-lifecycle-recorder-schema")
    assert schema_role["rules"] == [
        {
            "apiGroups": ["adx-mon.azure.com"],
            "resources": ["managementcommands"],
            "resourceNames": ["taugrid-lifecycle-schema"],
            "verbs": ["get", "list", "watch"],
        }
    ]


def test_gpu_monitoring_follows_the_controller_switch_until_set(render):
    def daemonsets(*sets):
        return [o for o in render(*sets) if o["kind"] == "DaemonSet"]

    assert len(daemonsets()) == 13
    assert daemonsets("components.tauCoreController.enabled=false") == []
    assert (
        len(
            daemonsets(
                "components.tauCoreController.enabled=false",
                "components.gpuMonitoring.enabled=true",
            )
        )
        == 13
    )
    (h200,) = daemonsets("gpu-monitoring.enabledGpuSkus={h200}")
    terms = h200["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
    expr = terms["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchExpressions"
    ]
    assert expr == [
        {
            "key": "node.kubernetes.io/instance-type",
            "operator": "In",
            "values": ["Standard_ND96isr_H200_v5"],
        }
    ]


def test_gpu_monitoring_has_no_secret_permissions(render):
    role = _one(render(), "ClusterRole", "gpu-monitoring")
    assert "secrets" not in {res for rule in role["rules"] for res in rule["resources"]}


def test_chart_declares_its_first_party_sub_charts_with_their_conditions():
    """Kueue and KubeRay are the bundle's (tests/charts/test_bundle.py), never this chart's."""
    meta = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert meta["apiVersion"] == "v2" and meta["kubeVersion"] == ">=1.30.0-0"
    deps = {d["name"]: d for d in meta["dependencies"]}
    assert set(deps) == {"tau-core-controller", "taugrid-core", "gpu-monitoring"}
    assert all(d["repository"] == "" for d in deps.values()), "nothing to fetch"
    assert deps["gpu-monitoring"]["condition"] == (
        "components.gpuMonitoring.enabled,components.tauCoreController.enabled"
    )
    for local in ("tau-core-controller", "taugrid-core", "gpu-monitoring"):
        assert (CHART / "charts" / local / "Chart.yaml").is_file()
    assert meta["version"] == DEFAULT_CHART_VERSION


def test_crds_are_the_generated_ones_shipped_with_the_controller_chart(render):
    crds = [o for o in render(include_crds=True) if o["kind"] == "CustomResourceDefinition"]
    assert sorted(c["metadata"]["name"] for c in crds) == [
        "clusters.tau.azure.com",
        "quotarequests.tau.azure.com",
        "workspaces.tau.azure.com",
    ]
    shipped = Path(CHART / "charts" / "tau-core-controller" / "crds")
    assert len(list(shipped.glob("*.yaml"))) == 3


def test_the_platform_sets_the_pod_security_level_of_workspace_namespaces(render):
    objects = render("tau-core-controller.podSecurity.enforce=baseline")
    deployment = _one(objects, "Deployment", "tau-core-controller")
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert "--pod-security-enforce=baseline" in container["args"]


def test_without_a_chart_value_workspace_namespaces_enforce_restricted():
    """One definition of the default: the chart leaves it to the controller."""
    from tau.controller.__main__ import parse

    assert parse([]).pod_security == "restricted"
    assert parse(["--pod-security-enforce=baseline"]).pod_security == "baseline"


def test_the_local_first_run_catalog_is_the_default_cpu_profile_on_the_real_nodes_queue(render):
    """hack/localcluster/real-node-values.yaml (docs/first-run.md) changes only the queue."""
    default = _one(render(), "TauCluster")["spec"]["workloadProfiles"][0]
    values = Path(__file__).resolve().parents[2] / "hack/localcluster/real-node-values.yaml"
    [profile] = _one(render(values=values), "TauCluster")["spec"]["workloadProfiles"]
    assert profile == {**default, "defaultLocalQueue": "realqueue"}
