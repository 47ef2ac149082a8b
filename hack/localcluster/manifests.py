"""Configuration and manifests the launcher writes or rewrites for processes on loopback.

Upstream manifests assume in-cluster Services (``webhook-service.system``); here the webhook and
conversion endpoints are ``https://127.0.0.1:<port>`` with our CA as caBundle, which the
admissionregistration and CRD conversion APIs both allow.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from . import fixtures as fx

# Kueue webhooks for the API groups we run; the pod/deployment/statefulset webhooks are left out
# because with failurePolicy Fail on every pod they would make the whole cluster depend on Kueue.
KUEUE_WEBHOOK_GROUPS = frozenset({"kueue.x-k8s.io", "batch", "ray.io"})
KUEUE_FRAMEWORKS = ("batch/job", "ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice")


def load_all(path: Path) -> Iterator[dict[str, Any]]:
    for doc in yaml.safe_load_all(path.read_text()):
        if doc:
            yield doc


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# --- KWOK ------------------------------------------------------------------------------------

_ACTIVE = [{"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"}]
_OUTCOME_KEY = f'.metadata.annotations["{fx.POD_OUTCOME_ANNOTATION}"]'
_RUN_DELAY = {
    "durationMilliseconds": 1000,
    "durationFrom": {
        "jq": {"expression": f'.metadata.annotations["{fx.POD_RUN_DURATION_ANNOTATION}"]'}
    },
}

_POD_READY_TEMPLATE = """\
{{ $now := Now }}
conditions:
- {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Initialized}
- {lastTransitionTime: {{ $now | Quote }}, status: "True", type: Ready}
- {lastTransitionTime: {{ $now | Quote }}, status: "True", type: ContainersReady}
{{ range .spec.readinessGates }}
- {lastTransitionTime: {{ $now | Quote }}, status: "True", type: {{ .conditionType | Quote }}}
{{ end }}
containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  ready: true
  restartCount: 0
  started: true
  state: {running: {startedAt: {{ $now | Quote }}}}
{{ end }}
initContainerStatuses:
{{ range .spec.initContainers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  ready: true
  restartCount: 0
  state:
    terminated:
      exitCode: 0
      reason: Completed
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
{{ end }}
{{ with NodeIPsWith .spec.nodeName }}
hostIP: {{ index . 0 | Quote }}
hostIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
{{ with PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" )
  ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
podIP: {{ index . 0 | Quote }}
podIPs:
{{ range . }}
- ip: {{ . | Quote }}
{{ end }}
{{ end }}
phase: Running
startTime: {{ $now | Quote }}
"""


def _terminal_template(
    phase: str,
    exit_code: int,
    container_reason: str,
    pod_reason: str = "",
    disruption: str = "",
    message: str = "",
) -> str:
    """Status of a pod whose containers all ended the same way (what a real kubelet reports)."""
    lines = ["{{ $now := Now }}", f"phase: {phase}"]
    if pod_reason:
        lines += [f"reason: {pod_reason}", f"message: {yaml.safe_dump(message).splitlines()[0]}"]
    lines += [
        "conditions:",
        '- {lastTransitionTime: {{ $now | Quote }}, status: "False", type: Ready,'
        " reason: PodCompleted}",
        '- {lastTransitionTime: {{ $now | Quote }}, status: "False", type: ContainersReady,'
        " reason: PodCompleted}",
    ]
    if disruption:
        lines.append(
            '- {lastTransitionTime: {{ $now | Quote }}, status: "True", type: DisruptionTarget,'
            f" reason: {disruption}, message: {yaml.safe_dump(message).splitlines()[0]}}}"
        )
    lines += [
        "containerStatuses:",
        "{{ range .spec.containers }}",
        "- image: {{ .image | Quote }}",
        "  name: {{ .name | Quote }}",
        "  ready: false",
        "  restartCount: 0",
        "  started: false",
        "  state:",
        f"    terminated: {{exitCode: {exit_code}, reason: {container_reason},"
        " startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}}",
        "{{ end }}",
    ]
    return "\n".join(lines) + "\n"


_OUTCOME_TEMPLATES = {
    fx.OUTCOME_SUCCEED: _terminal_template("Succeeded", 0, "Completed"),
    fx.OUTCOME_FAIL: _terminal_template("Failed", 1, "Error"),
    fx.OUTCOME_OOMKILLED: _terminal_template("Failed", 137, "OOMKilled"),
    fx.OUTCOME_EVICTED: _terminal_template(
        "Failed",
        137,
        "Error",
        pod_reason="Evicted",
        disruption="TerminationByKubelet",
        message="The node was low on resource: memory.",
    ),
    fx.OUTCOME_PREEMPTED: _terminal_template(
        "Failed",
        137,
        "Error",
        disruption="PreemptionByScheduler",
        message="kube-scheduler: preempting to accommodate a higher priority pod",
    ),
}


def _stage(
    name: str,
    selector: list[dict[str, Any]],
    next_: dict[str, Any],
    delay: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
        "selector": {"matchExpressions": selector},
        "next": next_,
    }
    if delay:
        spec["delay"] = delay
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "Stage",
        "metadata": {"name": name},
        "spec": spec,
    }


def kwok_pod_stages() -> list[dict[str, Any]]:
    """The complete pod lifecycle; giving any pod Stage replaces all of KWOK's defaults."""
    running = [*_ACTIVE, {"key": ".status.phase", "operator": "In", "values": ["Running"]}]
    stages = [
        _stage(
            "pod-ready",
            [
                *_ACTIVE,
                {"key": ".status.phase", "operator": "In", "values": ["Pending"]},
                {
                    "key": '.status.conditions.[] | select( .type == "Ready" ) | .status',
                    "operator": "NotIn",
                    "values": ["True"],
                },
            ],
            {"statusTemplate": _POD_READY_TEMPLATE},
        ),
        # Job pods without an outcome annotation behave like a program that exits 0.
        _stage(
            "pod-complete",
            [
                *running,
                {"key": ".metadata.ownerReferences.[].kind", "operator": "In", "values": ["Job"]},
                {"key": _OUTCOME_KEY, "operator": "DoesNotExist"},
            ],
            {"statusTemplate": _OUTCOME_TEMPLATES[fx.OUTCOME_SUCCEED]},
            _RUN_DELAY,
        ),
    ]
    for outcome, template in _OUTCOME_TEMPLATES.items():
        stages.append(
            _stage(
                f"pod-outcome-{outcome}",
                [*running, {"key": _OUTCOME_KEY, "operator": "In", "values": [outcome]}],
                {"statusTemplate": template},
                _RUN_DELAY,
            )
        )
    stages.append(
        _stage(
            "pod-delete",
            [{"key": ".metadata.deletionTimestamp", "operator": "Exists"}],
            {"delete": True},
        )
    )
    return stages


def kwok_config(node_stages: Path) -> str:
    """Stages for nodes (KWOK's own: initialize, then heartbeat with leases) and for pods.

    Once a config names any Stage, KWOK uses no built-in stage at all, so both are listed.
    """
    docs = [
        *load_all(node_stages / "fast" / "node-initialize.yaml"),
        *load_all(node_stages / "heartbeat-with-lease" / "node-heartbeat-with-lease.yaml"),
        *kwok_pod_stages(),
    ]
    return yaml.safe_dump_all(docs, sort_keys=False)


def default_cluster_logs(log_file: Path) -> dict[str, Any]:
    """Every container's `kubectl logs` reads this file unless a `Logs` object overrides it."""
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "ClusterLogs",
        "metadata": {"name": "taugrid-default-logs"},
        "spec": {"logs": [{"logsFile": str(log_file), "follow": False}]},
    }


def cri_log(lines: list[str]) -> str:
    """The CRI log format KWOK (like the kubelet) streams back."""
    return "".join(f"2026-01-01T00:00:00.000000000Z stdout F {line}\n" for line in lines)


# --- Kueue -------------------------------------------------------------------------------------


def kueue_config(
    health_port: int, metrics_port: int, webhook_port: int, visibility_port: int, cert_dir: Path
) -> str:
    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "namespace": fx.KUEUE_NAMESPACE,
        "health": {"healthProbeBindAddress": f"127.0.0.1:{health_port}"},
        "metrics": {"bindAddress": f"127.0.0.1:{metrics_port}"},
        "webhook": {"host": "127.0.0.1", "port": webhook_port, "certDir": str(cert_dir)},
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": False},
        "integrations": {"frameworks": list(KUEUE_FRAMEWORKS)},
        # The pending-workloads visibility API: an aggregated apiserver inside Kueue, reached
        # by kube-apiserver through the ExternalName Service of `kueue_visibility`.
        "featureGates": {
            "VisibilityOnDemand": True,
            # With it Kueue counts the real node's NoSchedule taint as untolerated (though the
            # flavor tolerates it) and terminates a topology-assigned pod that is unscheduled
            # for a moment, e.g. while its WaitForFirstConsumer volume is provisioned
            # (PodTerminatedByKueue, UnschedulableOnAssignedNode), failing the Job at once.
            "TASReplaceNodeOnNodeTaints": False,
        },
        "visibilityServer": {"bindAddress": "127.0.0.1", "bindPort": visibility_port},
    }
    return yaml.safe_dump(config, sort_keys=False)


VISIBILITY_GROUP = "visibility.kueue.x-k8s.io"
VISIBILITY_VERSIONS = ("v1beta1", "v1beta2")


def kueue_visibility(port: int) -> list[dict[str, Any]]:
    """Kueue's visibility APIServices, pointed at its loopback server.

    The aggregator resolves an APIService's Service to an address; Endpoints may not name
    loopback, but an ExternalName Service resolves to its name and the APIService's port,
    so kube-apiserver dials 127.0.0.1 directly (TLS unverified, as Kueue's own manifests do).
    """
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "visibility-server", "namespace": fx.KUEUE_NAMESPACE},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1"},
    }
    apiservices = [
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": f"{version}.{VISIBILITY_GROUP}"},
            "spec": {
                "group": VISIBILITY_GROUP,
                "version": version,
                "groupPriorityMinimum": 100,
                "versionPriority": 100,
                "insecureSkipTLSVerify": True,
                "service": {
                    "name": "visibility-server",
                    "namespace": fx.KUEUE_NAMESPACE,
                    "port": port,
                },
            },
        }
        for version in VISIBILITY_VERSIONS
    ]
    return [service, *apiservices]


def _conversion_crd_names(crd_dir: Path) -> set[str]:
    kustomization = yaml.safe_load((crd_dir / "kustomization.yaml").read_text())
    names = set()
    for patch in kustomization.get("patches", []):
        path = patch["path"] if isinstance(patch, dict) else patch
        if Path(path).name.startswith("webhook_in_"):
            names.add(yaml.safe_load((crd_dir / path).read_text())["metadata"]["name"])
    return names


def kueue_crds(crd_dir: Path, webhook_url: str, ca_bundle: bytes) -> list[dict[str, Any]]:
    """Kueue's CRDs, with the conversion webhook its kustomization adds pointed at loopback."""
    converted = _conversion_crd_names(crd_dir)
    crds = []
    for path in sorted((crd_dir / "bases").glob("*.yaml")):
        for crd in load_all(path):
            if crd["metadata"]["name"] in converted:
                crd["spec"]["conversion"] = {
                    "strategy": "Webhook",
                    "webhook": {
                        "conversionReviewVersions": ["v1"],
                        "clientConfig": {
                            "url": f"{webhook_url}/convert",
                            "caBundle": _b64(ca_bundle),
                        },
                    },
                }
            crds.append(crd)
    return crds


def kueue_webhooks(webhook_dir: Path, webhook_url: str, ca_bundle: bytes) -> list[dict[str, Any]]:
    configs = []
    for config in load_all(webhook_dir / "manifests.yaml"):
        kept = []
        for hook in config.get("webhooks", []):
            groups = {g for rule in hook.get("rules", []) for g in rule.get("apiGroups", [])}
            if not groups or not groups <= KUEUE_WEBHOOK_GROUPS:
                continue
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {"url": f"{webhook_url}{path}", "caBundle": _b64(ca_bundle)}
            # Like the Helm chart: never intercept the control plane's own namespaces.
            hook["namespaceSelector"] = {
                "matchExpressions": [
                    {
                        "key": "kubernetes.io/metadata.name",
                        "operator": "NotIn",
                        "values": ["kube-system", fx.KUEUE_NAMESPACE],
                    }
                ]
            }
            kept.append(hook)
        config["webhooks"] = kept
        config["metadata"] = {"name": f"kueue-{config['metadata']['name']}"}
        configs.append(config)
    return configs
