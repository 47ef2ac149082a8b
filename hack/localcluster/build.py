"""Build the control-plane binaries from the Go module proxy, cached outside the repository.

Each component has its own small Go module under ``modules/`` because their Kubernetes library
versions differ (KWOK is on 0.36, Kueue on 0.35, KubeRay on 0.34); one shared module would force
them all onto the newest and break the older ones. The binaries land in
``$XDG_CACHE_HOME/taugrid/localcluster/<key>/bin``, where the key hashes the Go version and every
go.mod/go.sum, so a clean clone on the same machine reuses them and a version bump rebuilds.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

MODULES_DIR = Path(__file__).resolve().parent / "modules"
# Bump when the build flags or the cached layout change, so old caches are not trusted.
RECIPE_VERSION = "2"


class BuildError(RuntimeError):
    """The Go build failed or the toolchain is missing; the message says which and where."""


@dataclass(frozen=True)
class Component:
    """One Go module in ``modules/`` and the main packages built from it."""

    name: str
    module: str  # the pinned upstream module whose version names the component
    binaries: dict[str, str]  # binary name -> main package
    version_ldflags: tuple[str, ...] = ()  # "-X pkg.var={version}" templates
    manifests: dict[str, str] = field(default_factory=dict)  # cache subdir -> dir in module
    wrapper: str = ""  # the directory under modules/ when it is not the component's name

    @property
    def directory(self) -> Path:
        return MODULES_DIR / (self.wrapper or self.name)

    def version(self) -> str:
        return required_version(self.directory / "go.mod", self.module)


def _k8s_version_flags() -> tuple[str, ...]:
    flags = []
    for pkg in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [
            f"-X {pkg}.gitVersion={{version}}",
            f"-X {pkg}.gitMajor={{major}}",
            f"-X {pkg}.gitMinor={{minor}}",
            f"-X {pkg}.gitTreeState=clean",
        ]
    return tuple(flags)


COMPONENTS = (
    Component(
        "kubernetes",
        "k8s.io/kubernetes",
        {
            name: f"k8s.io/kubernetes/cmd/{name}"
            for name in (
                "kube-apiserver",
                "kube-controller-manager",
                "kube-scheduler",
                "kubectl",
                # The real node's, from the same version as the control plane.
                "kubelet",
                "kube-proxy",
            )
        },
        _k8s_version_flags(),
    ),
    # etcd's main package is the root of its server module; the k8s wrapper pins the exact
    # version Kubernetes was released with, so it is built from the same module.
    Component(
        "etcd",
        "go.etcd.io/etcd/server/v3",
        {"etcd": "go.etcd.io/etcd/server/v3"},
        wrapper="kubernetes",
    ),
    Component(
        "kwok",
        "sigs.k8s.io/kwok",
        {"kwok": "sigs.k8s.io/kwok/cmd/kwok"},
        ("-X sigs.k8s.io/kwok/pkg/consts.Version={version}",),
        {"kwok-crds": "kustomize/crd/bases", "kwok-node-stages": "kustomize/stage/node"},
    ),
    Component(
        "kueue",
        "sigs.k8s.io/kueue",
        {"kueue": "sigs.k8s.io/kueue/cmd/kueue"},
        ("-X sigs.k8s.io/kueue/pkg/version.GitVersion={version}",),
        {"kueue-crds": "config/components/crd", "kueue-webhook": "config/components/webhook"},
    ),
    # Our own main package (modules/coredns/main.go) links only the plugins the node uses.
    Component(
        "coredns",
        "github.com/coredns/coredns",
        {"coredns": "."},
        ("-X github.com/coredns/coredns/coremain.GitCommit={version}",),
    ),
    Component(
        "local-path-provisioner",
        "github.com/rancher/local-path-provisioner",
        {"local-path-provisioner": "github.com/rancher/local-path-provisioner"},
        ("-X main.VERSION={version}",),
    ),
    Component(
        "kuberay",
        "github.com/ray-project/kuberay/ray-operator",
        {"ray-operator": "github.com/ray-project/kuberay/ray-operator"},
        (),
        {"kuberay-crds": "config/crd/bases"},
    ),
)


def required_version(go_mod: Path, module: str) -> str:
    for line in go_mod.read_text().splitlines():
        parts = line.strip().removeprefix("require ").split()
        if len(parts) >= 2 and parts[0] == module and parts[1] != "=>":
            return parts[1]
    raise BuildError(f"{go_mod} does not require {module}")


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "taugrid" / "localcluster"


def _go_env() -> dict[str, str]:
    env = dict(os.environ)
    env |= {
        "CGO_ENABLED": "0",
        "GOFLAGS": "-mod=readonly -trimpath -buildvcs=false",
        # Never switch toolchains behind the developer's back: a module needing a newer Go
        # must say so here, and the README documents the GOTOOLCHAIN export.
        "GOTOOLCHAIN": os.environ.get("GOTOOLCHAIN", "local"),
    }
    return env


def _go(args: list[str], cwd: Path, log: Path | None = None) -> str:
    if shutil.which("go") is None:
        raise BuildError("the `go` command is not on PATH; install Go 1.25+ to build the cluster")
    if log is None:
        result = subprocess.run(
            ["go", *args], cwd=cwd, env=_go_env(), capture_output=True, text=True, check=False
        )
        if result.returncode != 0:
            raise BuildError(f"go {' '.join(args)} failed in {cwd}:\n{result.stderr.strip()}")
        return result.stdout.strip()
    with log.open("a") as out:
        out.write(f"\n$ (cd {cwd} && go {' '.join(args)})\n")
        out.flush()
        result = subprocess.run(
            ["go", *args],
            cwd=cwd,
            env=_go_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if result.returncode != 0:
        tail = "\n".join(log.read_text().splitlines()[-25:])
        raise BuildError(f"go {' '.join(args)} failed in {cwd} (full log: {log}):\n{tail}")
    return ""


def versions() -> dict[str, str]:
    return {c.name: c.version() for c in COMPONENTS}


def cache_key() -> str:
    digest = hashlib.sha256(RECIPE_VERSION.encode())
    digest.update(_go(["env", "GOVERSION"], MODULES_DIR).encode())
    for path in sorted(MODULES_DIR.glob("*/go.*")):
        digest.update(path.relative_to(MODULES_DIR).as_posix().encode())
        digest.update(path.read_bytes())
    v = versions()
    readable = "_".join(f"{name}-{v[name]}" for name in ("kubernetes", "kueue", "kwok", "kuberay"))
    return f"{readable}-{digest.hexdigest()[:12]}"


@dataclass(frozen=True)
class Artifacts:
    """Where a finished build lives: binaries, and the upstream manifests the launcher needs."""

    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    @property
    def manifests(self) -> Path:
        return self.root / "manifests"

    def binary(self, name: str) -> Path:
        return self.bin / name

    @property
    def complete(self) -> bool:
        return (self.root / "versions.json").is_file()

    def versions(self) -> dict[str, str]:
        return json.loads((self.root / "versions.json").read_text())


def _ldflags(component: Component) -> str:
    version = component.version()
    major, minor = version.removeprefix("v").split(".")[:2]
    flags = ["-s", "-w"] + [
        f.format(version=version, major=major, minor=minor) for f in component.version_ldflags
    ]
    return " ".join(flags)


def _build_component(component: Component, artifacts: Artifacts, log: Path) -> None:
    missing = {n: p for n, p in component.binaries.items() if not artifacts.binary(n).exists()}
    if missing:
        staging = artifacts.root / f".staging-{component.name}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        started = time.monotonic()
        print(f"localcluster: building {', '.join(missing)} ...", file=sys.stderr, flush=True)
        for name, package in missing.items():
            _go(
                ["build", "-ldflags", _ldflags(component), "-o", str(staging / name), package],
                component.directory,
                log,
            )
            (staging / name).replace(artifacts.binary(name))
        shutil.rmtree(staging)
        print(
            f"localcluster: built {component.name} in {time.monotonic() - started:.0f}s",
            file=sys.stderr,
            flush=True,
        )
    for target, source in component.manifests.items():
        destination = artifacts.manifests / target
        if destination.exists():
            continue
        # `go mod download` (not `go list`) so a cleaned module cache is refilled, not skipped.
        download = _go(["mod", "download", "-json", component.module], component.directory)
        module_dir = Path(json.loads(download)["Dir"])
        tmp = destination.with_name(destination.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(module_dir / source, tmp)
        # The module cache is read-only; the copy must stay removable.
        for path in [tmp, *tmp.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        tmp.replace(destination)


def locate() -> Artifacts:
    """The artifacts for the pinned versions, without building (they may be incomplete)."""
    return Artifacts(cache_root() / cache_key())


def build() -> Artifacts:
    """Build every component not yet cached; seconds when the cache is warm."""
    artifacts = locate()
    if artifacts.complete:
        return artifacts
    artifacts.bin.mkdir(parents=True, exist_ok=True)
    artifacts.manifests.mkdir(parents=True, exist_ok=True)
    log = artifacts.root / "build.log"
    print(f"localcluster: cold build into {artifacts.root} (log: {log})", file=sys.stderr)
    for component in COMPONENTS:
        _build_component(component, artifacts, log)
    tmp = artifacts.root / "versions.json.tmp"
    tmp.write_text(json.dumps(versions(), indent=2) + "\n")
    tmp.replace(artifacts.root / "versions.json")
    return artifacts
