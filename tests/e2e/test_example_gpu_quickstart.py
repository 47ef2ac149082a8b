"""examples/aks-gpu-quickstart/README.md: the platform block and the clean-up, run verbatim.

The block applies the digest-pinned device plugin and waits for its rollout, exactly as the
README (and docs: GPU Ray Tune HPO on AKS, step 4) print it. No local node carries AKS's
`accelerator=nvidia` label, so the DaemonSet schedules nothing and the rollout is complete at
once: what this proves is that the manifest is one the API server accepts as written and that
the README's names (namespace, DaemonSet) are the manifest's.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import yaml
from controller_harness import get

from hack.localcluster import LocalCluster

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "aks-gpu-quickstart"


def block(heading: str) -> str:
    text = (EXAMPLE / "README.md").read_text()
    section = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert section, f"README.md lost its '## {heading}' section"
    (commands,) = re.findall(r"```bash\n(.*?)```", section.group(1), re.S)
    return commands


def run(cluster: LocalCluster, script: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "KUBECONFIG": str(cluster.kubeconfig),
        "PATH": os.pathsep.join([str(cluster.bin_dir), os.environ["PATH"]]),
        "GPU_POOL": "gpua10",
    }
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=360, check=False,
    )  # fmt: skip


def test_the_readme_applies_the_pinned_device_plugin_and_cleans_it_up(local_cluster):
    applied = run(local_cluster, block("Platform operator: make the GPU allocatable"))
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "daemonset.apps/nvidia-device-plugin-daemonset" in applied.stdout
    assert 'daemon set "nvidia-device-plugin-daemonset" successfully rolled out' in applied.stdout

    daemonset = get(
        local_cluster, "daemonset", "nvidia-device-plugin-daemonset", "-n", "kube-system"
    )
    manifest = yaml.safe_load((EXAMPLE / "nvidia-device-plugin.yaml").read_text())
    (container,) = daemonset["spec"]["template"]["spec"]["containers"]
    assert container["image"] == manifest["spec"]["template"]["spec"]["containers"][0]["image"]
    assert re.search(r"@sha256:[0-9a-f]{64}$", container["image"])
    tolerations = daemonset["spec"]["template"]["spec"]["tolerations"]
    assert {
        "key": "sku",
        "operator": "Equal",
        "value": "gpu",
        "effect": "NoSchedule",
    } in tolerations

    cleanup = "\n".join(
        line for line in block("Clean up").splitlines() if line.startswith("kubectl")
    )
    removed = run(local_cluster, cleanup)
    assert removed.returncode == 0, removed.stderr
    assert (
        get(local_cluster, "daemonset", "nvidia-device-plugin-daemonset", "-n", "kube-system")
        is None
    )
