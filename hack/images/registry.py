"""Pushing built images to a registry (skopeo), and a throwaway local registry to push to.

A pushed image is named by digest as well as by tag: containerd caches by reference, so tests
and charts that name ``REGISTRY/REPOSITORY@sha256:…`` always run the bytes this checkout built,
whatever an earlier run left behind under the same tag.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .build import SETUP_SCRIPT, Builder, BuildError, Built


@dataclass(frozen=True)
class ImageRef:
    """One image as a registry serves it."""

    name: str
    registry: str
    repository: str
    tag: str
    digest: str

    @property
    def reference(self) -> str:
        """The immutable reference (by digest) that pods and chart values should use."""
        return f"{self.registry}/{self.repository}@{self.digest}"

    @property
    def tagged(self) -> str:
        return f"{self.registry}/{self.repository}:{self.tag}"


def push(builder: Builder, built: list[Built], registry: str) -> list[ImageRef]:
    """Copy each built image from the cache layout to REGISTRY (HOST[:PORT][/PATH]); a loopback
    registry may speak plain HTTP, any other must present a certificate this machine trusts."""
    if not shutil.which("skopeo"):
        raise BuildError(f"skopeo is missing; run {SETUP_SCRIPT} (owner: developer machine)")
    refs = []
    with builder.locked(), tempfile.TemporaryDirectory(prefix="taugrid-push-") as tmp:
        for image in built:
            digest_file = Path(tmp) / f"{image.name}.digest"
            destination = f"docker://{registry}/{image.repository}:{image.version}"
            argv = ["skopeo", "copy", "--quiet", f"--dest-tls-verify={_tls(registry)}"]
            argv.append("--preserve-digests")
            argv += ["--digestfile", str(digest_file)]
            argv += [f"oci:{builder.layout}:{image.tag}", destination]
            builder.run(f"push-{image.name}", argv)
            digest = digest_file.read_text().strip()
            if digest != image.digest:
                raise BuildError(
                    f"push {image.name}: registry {registry} stored digest {digest}, "
                    f"built {image.digest}"
                )
            refs.append(ImageRef(image.name, registry, image.repository, image.version, digest))
    return refs


def _tls(registry: str) -> str:
    host = registry.split("/", 1)[0].rsplit(":", 1)[0]
    return "false" if host in ("localhost", "[::1]") or host.startswith("127.") else "true"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve_registry(root: Path, timeout: float = 30.0) -> Iterator[str]:
    """Debian's docker-registry (distribution v2) on a free loopback port; yields HOST:PORT."""
    binary = shutil.which("docker-registry")
    if binary is None:
        raise BuildError(
            f"docker-registry is missing; run {SETUP_SCRIPT} (owner: developer machine)"
        )
    port = _free_port()
    address = f"127.0.0.1:{port}"
    root.mkdir(parents=True, exist_ok=True)
    config = root / "config.yml"
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: warn\n"
        f"storage:\n  filesystem:\n    rootdirectory: {root / 'data'}\n"
        f"http:\n  addr: {address}\n"
    )
    log = (root / "registry.log").open("wb")
    process = subprocess.Popen([binary, "serve", str(config)], stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"http://{address}/v2/", timeout=2):
                    break
            except (urllib.error.URLError, OSError):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise BuildError(
                        f"docker-registry did not serve on {address} (log: {root / 'registry.log'})"
                    ) from None
                time.sleep(0.2)
        yield address
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
