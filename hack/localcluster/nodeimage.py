"""Images the real node needs before anything else is pushed, built without a daemon.

No registry outside this machine is reachable, so the pod sandbox (pause) image is made here from
Debian's statically linked busybox and packed as an OCI layout by umoci. The same layout carries a
``shell`` tag (busybox's shell and applets, running as nobody) for local-path-provisioner's
helper pods and for tests that only need a shell. A second layout holds a Debian ``python``
image (mmdebstrap's essential set, bash and python3-minimal) for tests whose workloads run a
Python interpreter. Layouts are cached beside the binaries, keyed by what went into them, and
pushed to each cluster's registry by skopeo.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from .build import BuildError, cache_root

BUSYBOX = Path("/bin/busybox")
REPOSITORY = "taugrid/busybox"
PAUSE_TAG = "pause"
SHELL_TAG = "shell"
NOBODY = "65534:65534"
PYTHON_REPOSITORY = "taugrid/python"
PYTHON_SUITE = "bookworm"
PYTHON_PACKAGES = ("python3-minimal",)


def cache() -> Path:
    """Layouts do not depend on the Go builds, so they sit beside them, not in them."""
    directory = cache_root() / "node-images"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def _run(*args: str) -> str:
    if shutil.which(args[0]) is None:
        raise BuildError(f"`{args[0]}` is not installed (run hack/setup/15-node-packages.sh)")
    result = subprocess.run(args, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise BuildError(f"`{' '.join(args)}` failed: {result.stderr.strip()}")
    return result.stdout.strip()


def busybox_version() -> str:
    return _run("dpkg-query", "-W", "-f=${Version}", "busybox-static")


def tag(name: str) -> str:
    """An image tag naming the busybox it was built from, so a package upgrade is a new tag."""
    safe = "".join(c if c.isalnum() or c in "._-" else "-" for c in busybox_version())
    return f"{name}-{safe}"


def build_layout(cache: Path) -> Path:
    """The OCI layout at ``cache/busybox-oci`` with both tags; built once per busybox version."""
    layout = cache / "busybox-oci"
    stamp = layout / ".busybox-version"
    if stamp.is_file() and stamp.read_text() == busybox_version():
        return layout
    if not BUSYBOX.is_file():
        raise BuildError(f"{BUSYBOX} is missing (Debian package busybox-static)")
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        work = Path(scratch) / "layout"
        image = f"{work}:{tag(SHELL_TAG)}"
        bundle = Path(scratch) / "bundle"
        _run("umoci", "init", "--layout", str(work))
        _run("umoci", "new", "--image", image)
        _run("umoci", "unpack", "--rootless", "--image", image, str(bundle))
        root = bundle / "rootfs"
        (root / "bin").mkdir(parents=True)
        shutil.copy2(BUSYBOX, root / "bin" / "busybox")
        for applet in _run(str(BUSYBOX), "--list").split():
            if applet != "busybox":
                (root / "bin" / applet).symlink_to("busybox")
        (root / "tmp").mkdir(mode=0o1777)
        (root / "tmp").chmod(0o1777)
        _run("umoci", "repack", "--image", image, str(bundle))
        _run(
            "umoci",
            "config",
            "--image",
            image,
            "--config.user",
            NOBODY,
            "--config.env",
            "PATH=/bin",
            "--config.cmd",
            "sh",
        )
        # The sandbox only holds the pod's namespaces open; containerd stops it with SIGKILL.
        _run(
            "umoci",
            "config",
            "--image",
            image,
            "--tag",
            tag(PAUSE_TAG),
            "--config.entrypoint",
            "/bin/sleep",
            "--config.cmd",
            "infinity",
        )
        _run("umoci", "gc", "--layout", str(work))
        (work / ".busybox-version").write_text(busybox_version())
        shutil.rmtree(layout, ignore_errors=True)
        work.replace(layout)
    return layout


def python_tag() -> str:
    recipe = f"{PYTHON_SUITE} {' '.join(PYTHON_PACKAGES)}"
    return f"{PYTHON_SUITE}-{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"


def build_python_layout(cache: Path) -> Path:
    """``cache/python-oci``: one layer made by mmdebstrap (a minutes-long first build)."""
    layout = cache / "python-oci"
    if (layout / ".tag").is_file() and (layout / ".tag").read_text() == python_tag():
        return layout
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        rootfs = Path(scratch) / "rootfs.tar"
        excluded = ("/usr/share/doc/*", "/usr/share/man/*", "/usr/share/locale/*")
        _run("mmdebstrap", "--quiet", "--mode=root", "--variant=essential",
             f"--include={','.join(PYTHON_PACKAGES)}",
             *(f"--dpkgopt=path-exclude={path}" for path in excluded),
             PYTHON_SUITE, str(rootfs))  # fmt: skip
        work = Path(scratch) / "layout"
        image = f"{work}:{python_tag()}"
        _run("umoci", "init", "--layout", str(work))
        _run("umoci", "new", "--image", image)
        _run("umoci", "raw", "add-layer", "--image", image, str(rootfs))
        _run("umoci", "config", "--image", image, "--config.user", NOBODY,
             "--config.env", "PATH=/usr/local/bin:/usr/bin:/bin",
             "--config.env", "PYTHONUNBUFFERED=1",
             "--config.workingdir", "/tmp", "--config.cmd", "python3")  # fmt: skip
        _run("umoci", "gc", "--layout", str(work))
        (work / ".tag").write_text(python_tag())
        shutil.rmtree(layout, ignore_errors=True)
        work.replace(layout)
    return layout


def insert(layout: Path, tag: str, source: Path, target: str, new_tag: str) -> Path:
    """A copy of ``layout`` whose ``new_tag`` is ``tag`` plus ``source`` at ``target`` (one
    layer); the cached layout itself is never written, so sessions can share it."""
    derived = Path(tempfile.mkdtemp(prefix="derived-", dir=cache())) / "layout"
    shutil.copytree(layout, derived)
    _run("umoci", "insert", "--rootless", "--image", f"{derived}:{tag}", "--tag", new_tag,
         str(source), target)  # fmt: skip
    return derived


def copy(layout: Path, tag: str, reference: str) -> str:
    """Push one tag of an OCI layout to ``reference`` in a plain-HTTP registry."""
    _run("skopeo", "copy", "--quiet", "--dest-tls-verify=false",
         f"oci:{layout}:{tag}", f"docker://{reference}")  # fmt: skip
    return reference


def push(layout: Path, registry: str) -> dict[str, str]:
    """Copy the busybox layout's tags into ``registry``; returns tag name -> image reference."""
    return {
        name: copy(layout, tag(name), f"{registry}/{REPOSITORY}:{tag(name)}")
        for name in (PAUSE_TAG, SHELL_TAG)
    }
