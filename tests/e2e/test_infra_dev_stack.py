"""The dev stack's platform install, checked by the real API server of the local control plane.

The Pulumi engine cannot run here, so the test takes what the `dev` stack would hand Helm (the
program's values for stacks/Pulumi.dev.yaml), renders the chart with the real helm and has the
API server accept every object with a server-side dry-run: schemas, CRD structural pruning and
admission, without persisting anything. The bootstrap TauWorkspace the AKS stacks apply goes
through the same check against the generated CRD.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import yaml

from infra.config import parse_stack_config, settings_from_stack_file
from infra.platform_values import deep_merge
from infra.program import platform_values
from infra.workspace import bootstrap_workspace_object

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "taugrid"
CRD_DIR = CHART / "charts" / "tau-core-controller" / "crds"
THIRD_PARTY_DEPENDENCIES = {"kueue", "kuberay-operator"}


def dev_config():
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    return parse_stack_config(settings_from_stack_file(document))


def helm() -> str:
    found = shutil.which("helm") or str(ROOT / ".venv" / "bin" / "helm")
    assert Path(found).exists(), "helm is not installed: run hack/setup/10-helm.sh"
    return found


def offline_chart(tmp_path: Path) -> Path:
    """The chart without its pinned OCI dependencies (the dev stack switches both off)."""
    copy = tmp_path / "taugrid"
    shutil.copytree(CHART, copy, ignore=shutil.ignore_patterns("*.tgz"))
    chart = yaml.safe_load((copy / "Chart.yaml").read_text())
    chart["dependencies"] = [
        dep for dep in chart["dependencies"] if dep["name"] not in THIRD_PARTY_DEPENDENCIES
    ]
    (copy / "Chart.yaml").write_text(yaml.safe_dump(chart, sort_keys=False))
    return copy


def install_tau_crds(local_cluster) -> None:
    local_cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(CRD_DIR))
    for crd in ("clusters", "workspaces", "quotarequests"):
        local_cluster.kubectl(
            "wait", "--for=condition=Established", f"crd/{crd}.tau.azure.com", "--timeout=60s"
        )


def test_dev_stack_platform_objects_pass_the_api_server(local_cluster, namespace, tmp_path):
    config = dev_config()
    assert not config.provisions_azure
    # The stack targets the local control plane's admin context by name.
    kubeconfig = yaml.safe_load(local_cluster.kubeconfig.read_text())
    assert config.kube_context in {context["name"] for context in kubeconfig["contexts"]}
    values_file = tmp_path / "values.yaml"
    values_file.write_text(yaml.safe_dump(platform_values(config)))
    rendered = subprocess.run(
        [
            helm(),
            "template",
            "taugrid",
            str(offline_chart(tmp_path)),
            "--namespace",
            namespace,
            "-f",
            str(values_file),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rendered.returncode == 0, rendered.stderr
    objects = [doc for doc in yaml.safe_load_all(rendered.stdout) if doc]
    kinds = {obj["kind"] for obj in objects}
    assert "Deployment" in kinds
    assert "ClusterQueue" not in kinds  # the local control plane seeds its own baseline queue
    install_tau_crds(local_cluster)

    result = local_cluster.kubectl(
        "apply",
        "--dry-run=server",
        "-o",
        "json",
        "-f",
        "-",
        input=yaml.safe_dump_all(objects),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    accepted = json.loads(result.stdout)
    items = accepted["items"] if accepted.get("kind") == "List" else [accepted]
    assert sorted((i["kind"], i["metadata"]["name"]) for i in items) == sorted(
        (o["kind"], o["metadata"]["name"]) for o in objects
    )


def test_bootstrap_workspace_is_accepted_unchanged_by_the_crd(local_cluster, namespace):
    install_tau_crds(local_cluster)
    workspace = bootstrap_workspace_object(
        "taugrid-default", "33333333-4444-5555-6666-777777777777", "taugrid-default"
    )
    workspace["metadata"]["namespace"] = namespace  # dry-run in the test's own namespace
    result = local_cluster.kubectl(
        "create",
        "--dry-run=server",
        "-o",
        "json",
        "-f",
        "-",
        input=json.dumps(workspace),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    accepted = json.loads(result.stdout)
    # Defaults may be added; nothing the stack sends may be pruned or rewritten.
    assert deep_merge(accepted["spec"], workspace["spec"]) == accepted["spec"]
    assert accepted["metadata"]["annotations"] == workspace["metadata"]["annotations"]
