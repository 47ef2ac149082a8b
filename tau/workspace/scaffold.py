"""`tau workspace init-repo`: a TauGrid-ready research repository, from nothing.

The scaffold holds checked-in targets (`tau/smoke.yaml`, `tau/train.yaml`), the code they
run, and, only when the platform's workspace and cluster are named, the connection
descriptor. It never writes `policy.workspace`, namespaces, queues or credentials into the
targets: those stay workspace concerns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tau import atomicfile
from tau.api.connection import DESCRIPTOR_PATH, SCHEMA, AksResourceID
from tau.api.workspace import RESEARCHER_ROLE, WORKSPACE_RBAC
from tau.connection import parse_descriptor_text
from tau.errors import UsageError
from tau.version import __version__


@dataclass(frozen=True)
class AksCluster:
    subscription_id: str
    tenant_id: str
    resource_group: str
    cluster: str

    @property
    def resource_id(self) -> str:
        return str(AksResourceID(self.subscription_id, self.resource_group, self.cluster))


@dataclass(frozen=True)
class ScaffoldRequest:
    name: str
    output: Path
    image: str
    python_version: str = "3.12"
    package: str = ""
    workspace: str = ""
    kube_context: str = ""
    system_namespace: str = ""
    aks: AksCluster | None = None
    smoke_command: str = ""
    train_command: str = ""
    force: bool = False


def package_name(name: str) -> str:
    """Lowercase, `-`/`.`/space become `_`, repeats collapse, a leading digit gets `tau_`."""
    cleaned = re.sub(r"[-. ]+", "_", name.lower())
    cleaned = re.sub(r"[^a-z0-9_]", "", cleaned)
    cleaned = re.sub(r"_+", "_", cleaned).strip("_") or "project"
    return f"tau_{cleaned}" if cleaned[0].isdigit() else cleaned


def descriptor_text(request: ScaffoldRequest) -> str | None:
    """The descriptor, or None when the workspace/cluster flags are absent."""
    context = request.kube_context or (request.aks.cluster if request.aks else "")
    if not request.workspace:
        if request.kube_context or request.aks:
            raise UsageError("--kube-context and the AKS flags require --workspace")
        return None
    if not context:
        raise UsageError(
            "--workspace needs --kube-context, or the AKS flags --azure-subscription-id, "
            "--azure-tenant-id, --aks-resource-group and --aks-cluster"
        )
    lines = [
        f"schema: {SCHEMA}",
        f"workspace: {request.workspace}",
        "cluster:",
        f"  contextName: {context}",
    ]
    if request.system_namespace:
        lines.append(f"  systemNamespace: {request.system_namespace}")
    lines += ["access:"]
    if request.aks:
        lines += [
            "  method: aks",
            "  aks:",
            f"    resourceID: {request.aks.resource_id}",
            f"    tenantID: {request.aks.tenant_id}",
        ]
    else:
        lines.append("  method: kubeconfig")
    lines += [
        "authorization:",
        f"  mode: {WORKSPACE_RBAC}",
        f"  requiredRole: {RESEARCHER_ROLE}",
        "requirements:",
        f"  minTauVersion: {__version__}",
        "network:",
        "  privateCluster: false",
    ]
    text = "\n".join(lines) + "\n"
    parse_descriptor_text(text, DESCRIPTOR_PATH)
    return text


def _target(name: str, target: str, entrypoint: str, image: str, cpu: str, memory: str) -> str:
    return (
        f"# `tau run {target}` submits this target; namespace, queue and credentials come from\n"
        f"# the workspace connection ({DESCRIPTOR_PATH}), never from this file.\n"
        f"name: {name}-{target}\n"
        "engine: job\n"
        f"entrypoint: {entrypoint}\n"
        "runtime:\n"
        f"  image: {image}\n"
        "compute:\n"
        "  gpus: 0\n"
        f'  cpu_request: "{cpu}"\n'
        f"  memory_request: {memory}\n"
    )


def files(request: ScaffoldRequest) -> dict[str, str]:
    package = request.package or package_name(request.name)
    smoke = request.smoke_command or f"python -m {package}.smoke"
    train = request.train_command or f"python -m {package}.train"
    out = {
        "README.md": (
            f"# {request.name}\n\n"
            "A TauGrid research repository.\n\n"
            "```sh\n"
            "tau workspace connection          # verify the workspace this repository uses\n"
            "tau run validate --config tau/train.yaml\n"
            "tau run smoke                      # built-in onboarding smoke\n"
            "tau run train --dry-run=client\n"
            "tau run train\n"
            "```\n\n"
            f"Locally: `{smoke}` and `{train}`.\n\n"
            "Build and push `images/train.Dockerfile`, then pin its immutable tag or digest in\n"
            "`tau/*.yaml` (`runtime.image`).\n"
        ),
        ".gitignore": "__pycache__/\n*.pyc\n.venv/\ndist/\n",
        ".python-version": f"{request.python_version}\n",
        "pyproject.toml": (
            "[project]\n"
            f'name = "{request.name}"\n'
            'version = "0.1.0"\n'
            f'requires-python = ">={request.python_version}"\n'
            "dependencies = []\n\n"
            "[tool.setuptools.packages.find]\n"
            'where = ["src"]\n'
        ),
        f"src/{package}/__init__.py": f'"""{request.name}."""\n',
        f"src/{package}/smoke.py": (
            '"""Proves the image, entrypoint and output path work before a real run."""\n\n'
            "import os\n\n"
            'print("smoke ok; output dir:", os.environ.get("TAU_OUTPUT_DIR", "<unset>"))\n'
        ),
        f"src/{package}/train.py": (
            '"""Training entrypoint: replace with your own loop."""\n\n'
            "import os\n\n\n"
            "def main() -> None:\n"
            '    out = os.environ.get("TAU_OUTPUT_DIR", "outputs")\n'
            "    os.makedirs(out, exist_ok=True)\n"
            '    print("training done; results in", out)\n\n\n'
            'if __name__ == "__main__":\n'
            "    main()\n"
        ),
        "images/train.Dockerfile": (
            f"FROM python:{request.python_version}-slim\n"
            "WORKDIR /app\n"
            "COPY . /app\n"
            "RUN pip install --no-cache-dir .\n"
        ),
        "tau/smoke.yaml": _target(
            request.name, "smoke", f"../src/{package}/smoke.py", request.image, "500m", "512Mi"
        ),
        "tau/train.yaml": _target(
            request.name, "train", f"../src/{package}/train.py", request.image, "1", "2Gi"
        ),
    }
    descriptor = descriptor_text(request)
    if descriptor is not None:
        out[DESCRIPTOR_PATH] = descriptor
    return out


def scaffold(request: ScaffoldRequest) -> list[Path]:
    """Write the repository; existing files abort (nothing is written) unless `force`."""
    if not request.image.strip():
        raise UsageError("--image is required (the project image, ideally an immutable tag)")
    planned = files(request)
    root = request.output
    if not request.force:
        clashes = sorted(rel for rel in planned if (root / rel).exists())
        if clashes:
            raise UsageError(
                f"{len(clashes)} file(s) already exist in {root} (e.g. {clashes[0]}); "
                "rerun with --force to overwrite"
            )
    written = []
    for rel, content in planned.items():
        path = root / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomicfile.write_text(path, content)
        except OSError as error:
            why = error.strerror or type(error).__name__
            raise UsageError(f"--output {root}: cannot write {rel} ({why})") from None
        written.append(path)
    return written
