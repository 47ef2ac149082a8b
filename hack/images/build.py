"""Daemonless, layered, cached builds of the images described by docker/*.Containerfile.

Three layers, each cached under ``${XDG_CACHE_HOME:-~/.cache}/taugrid/images/`` in one OCI
image layout and keyed by the hash of exactly what goes into it:

1. base: Debian ``minbase`` of the Containerfile's suite plus its ``DEBIAN_PACKAGES``, the
   non-root user and the login-shell PATH, made by mmdebstrap from the machine's apt sources.
2. deps: a venv at ``TAU_VENV`` with the image's dependency set (requirements.py) installed by
   the image's own pip inside a chroot of the unpacked base; umoci repacks the difference.
3. named build contexts (``COPY --from=CONTEXT``, e.g. the Portal's KueueViz bundle): the
   directory the context's set-up script prints, archived at its destination the same way;
   keyed by the directory's content, so a tau change leaves it cached.
4. tau: this checkout's wheel installed with ``--no-deps`` semantics by pypa/installer into a
   staging tree (scripts point at the venv's python, hash-checked bytecode, fixed mtimes),
   archived by GNU tar in its reproducible form and added by ``umoci raw add-layer``: a source
   change rebuilds only this thin layer, byte for byte the same for the same source.

umoci writes the image config from the Containerfile's final stage; skopeo pushes (push.py).
Building needs root (mmdebstrap, chroot), as the CI and developer machines here have.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from .containerfile import Containerfile, ContextCopy, ImageConfig, parse
from .requirements import requirements

REPO = Path(__file__).resolve().parents[2]
DOCKER_DIR = REPO / "docker"
# Bumped when a change here alters what that cached layer contains.
RECIPE = {"base": "1", "deps": "1", "context": "1", "tau": "3"}
# Every timestamp the build controls (layer history, config, staged files, bytecode mode).
EPOCH = 1704067200
SETUP_SCRIPT = "hack/setup/05-image-tools.sh"
# Named build contexts a Containerfile may COPY from: the idempotent set-up script that builds
# each (cached) and prints its directory as the last line of its output.
CONTEXTS = {"kueueviz": "hack/setup/25-kueueviz.sh"}
# Tau layers kept per image: checkouts and sessions on one machine build different sources.
KEEP_TOP_LAYERS = 4
TITLE_LABEL = "org.opencontainers.image.title"
_APT_SOURCES = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))
# pip settings of this machine that the chrooted pip must share to reach PyPI as set up here.
_PIP_ENV = (
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_TRUSTED_HOST",
    "PIP_DEFAULT_TIMEOUT",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
)
_CA_ENV = ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")
_HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")

Progress = Callable[[str], None]


class BuildError(RuntimeError):
    """An image could not be built; the message names the step and its log."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "taugrid" / "images"


def image_names() -> list[str]:
    """Images are the Containerfiles under docker/: ``NAME.Containerfile``."""
    return sorted(p.name.removesuffix(".Containerfile") for p in DOCKER_DIR.glob("*.Containerfile"))


@dataclass(frozen=True)
class Built:
    """A built image in the cache layout: its tag there and what a push names it."""

    name: str
    repository: str
    version: str
    tag: str
    digest: str
    key: str


def _say(text: str) -> None:
    print(f"images: {text}", file=sys.stderr, flush=True)


def _sha(*parts: object) -> str:
    digest = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else json.dumps(part, sort_keys=True).encode()
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def _stamp() -> str:
    return datetime.fromtimestamp(EPOCH, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def require_tools() -> None:
    missing = [t for t in ("mmdebstrap", "umoci", "skopeo", "chroot") if not shutil.which(t)]
    if missing:
        raise BuildError(
            f"image tools missing: {', '.join(missing)}; run {SETUP_SCRIPT} "
            "(owner: developer machine)"
        )
    if os.geteuid() != 0:
        raise BuildError(
            "building images needs root (mmdebstrap and chroot); run as root "
            "(owner: developer machine)"
        )


class Builder:
    def __init__(self, cache: Path | None = None, progress: Progress = _say) -> None:
        self.cache = cache or cache_root()
        self.layout = self.cache / "oci"
        self.work = self.cache / "work"
        self.logs = self.cache / "logs"
        self.progress = progress
        self._lock_depth = 0

    # --- the layout -------------------------------------------------------------------------

    def tags(self) -> dict[str, str]:
        """Tag → manifest digest, read from the layout's index.json."""
        try:
            index = json.loads((self.layout / "index.json").read_text())
        except FileNotFoundError:
            return {}
        tags = {}
        for entry in index.get("manifests") or []:
            name = (entry.get("annotations") or {}).get("org.opencontainers.image.ref.name")
            if name:
                tags[name] = entry["digest"]
        return tags

    def manifest(self, tag: str) -> dict:
        digest = self.tags()[tag]
        return json.loads(self._blob(digest).read_text())

    def image_config(self, tag: str) -> dict:
        return json.loads(self._blob(self.manifest(tag)["config"]["digest"]).read_text())

    def _blob(self, digest: str) -> Path:
        algorithm, _, hexdigest = digest.partition(":")
        return self.layout / "blobs" / algorithm / hexdigest

    def run(self, step: str, argv: list[str], **kwargs) -> str:
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.logs / f"{step}.log"
        with log.open("ab") as out:
            out.write(f"$ {' '.join(argv)}\n".encode())
            out.flush()
            result = subprocess.run(argv, stdout=subprocess.PIPE, stderr=out, **kwargs)
            out.write(result.stdout)
        if result.returncode != 0:
            tail = log.read_text(errors="replace").strip().splitlines()[-1:] or [""]
            raise BuildError(
                f"{step}: {argv[0]} exited {result.returncode}: {tail[0]} (log: {log})"
            )
        return result.stdout.decode(errors="replace")

    def _umoci(self, step: str, *args: str) -> str:
        return self.run(step, ["umoci", *args])

    def _ensure_layout(self) -> None:
        if not (self.layout / "index.json").exists():
            self.layout.parent.mkdir(parents=True, exist_ok=True)
            self._umoci("layout", "init", "--layout", str(self.layout))

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """One build or push at a time per cache: sessions and test runs share it (reentrant)."""
        if self._lock_depth:
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        self.cache.mkdir(parents=True, exist_ok=True)
        with (self.cache / "lock").open("w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            self._lock_depth = 1
            try:
                yield
            finally:
                self._lock_depth = 0
                fcntl.flock(handle, fcntl.LOCK_UN)

    # --- layer 1: base ----------------------------------------------------------------------

    def base(self, cf: Containerfile) -> tuple[str, str]:
        """(tag, key) of the Debian base; mmdebstrap runs only on a cache miss."""
        suite = cf.arg("DEBIAN_SUITE")
        packages = sorted(cf.arg("DEBIAN_PACKAGES").split())
        uid, venv = cf.arg("TAU_UID"), cf.arg("TAU_VENV")
        sources = _apt_sources(suite)
        key = _sha(
            "base",
            RECIPE["base"],
            suite,
            packages,
            uid,
            venv,
            [p.read_text() for p in sources],
        )
        tag = f"base-{key[:16]}"
        if tag in self.tags():
            return tag, key
        started = time.monotonic()
        self.progress(f"base {suite} + {' '.join(packages)}: mmdebstrap (one-time, ~2 min)")
        self.work.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.work) as tmp:
            tarball = Path(tmp) / "base.tar"
            profile = f"PATH={venv}/bin:$PATH\\nexport PATH\\n"
            hooks = [
                f'chroot "$1" groupadd --gid {uid} tau',
                f'chroot "$1" useradd --uid {uid} --gid {uid} --create-home --shell /bin/bash tau',
                f"printf '{profile}' > \"$1/etc/profile.d/taugrid.sh\"",
            ]
            argv = ["mmdebstrap", "--variant=minbase", "--mode=root", "--format=tar"]
            argv += [f"--include={','.join(packages)}"]
            for pattern in ("/usr/share/doc/*", "/usr/share/man/*", "/usr/share/locale/*"):
                argv.append(f"--dpkgopt=path-exclude={pattern}")
            argv.append("--dpkgopt=path-include=/usr/share/doc/*/copyright")
            argv += [f"--customize-hook={hook}" for hook in hooks]
            argv += [suite, str(tarball), *map(str, sources)]
            env = os.environ | {"SOURCE_DATE_EPOCH": str(EPOCH)}
            self.run("base", argv, env=env)
            self._ensure_layout()
            scratch = f"tmp-{tag}"
            self._umoci("base", "new", "--image", f"{self.layout}:{scratch}")
            self._umoci(
                "base",
                "raw",
                "add-layer",
                "--image",
                f"{self.layout}:{scratch}",
                f"--history.created={_stamp()}",
                f"--history.created_by=mmdebstrap {suite} minbase + {' '.join(packages)}",
                str(tarball),
            )
            self._retag(scratch, tag)
        self.progress(f"base built in {time.monotonic() - started:.0f}s")
        return tag, key

    # --- layer 2: dependencies --------------------------------------------------------------

    def deps(self, name: str, cf: Containerfile, base_tag: str, base_key: str) -> tuple[str, str]:
        """(tag, key) of the dependency layer; pip runs only when the dependency set changed."""
        extras = [e for e in cf.arg("TAU_EXTRAS").split(",") if e]
        lines = requirements(REPO / "pyproject.toml", extras)
        venv = cf.arg("TAU_VENV")
        key = _sha("deps", RECIPE["deps"], base_key, venv, lines)
        tag = f"deps-{name}-{key[:16]}"
        meta = self.cache / "meta" / f"{tag}.json"
        if tag in self.tags() and meta.exists():
            return tag, key
        started = time.monotonic()
        self.progress(f"{name}: installing {len(lines)} requirements ({','.join(extras)}) with pip")
        self.work.mkdir(parents=True, exist_ok=True)
        bundle = Path(tempfile.mkdtemp(prefix="bundle-", dir=self.work))
        try:
            source = f"{self.layout}:{base_tag}"
            self._umoci(f"deps-{name}", "unpack", "--image", source, str(bundle))
            rootfs = bundle / "rootfs"
            python = self._pip_install(name, rootfs, venv, lines)
            self._umoci(
                f"deps-{name}",
                "repack",
                "--image",
                f"{self.layout}:{tag}",
                f"--history.created={_stamp()}",
                f"--history.created_by=pip install into {venv}: {' '.join(lines)}",
                str(bundle),
            )
        finally:
            shutil.rmtree(bundle, ignore_errors=True)
        meta.parent.mkdir(parents=True, exist_ok=True)
        meta.write_text(json.dumps({"python": python, "requirements": lines}) + "\n")
        self.progress(f"{name}: dependency layer built in {time.monotonic() - started:.0f}s")
        return tag, key

    def _pip_install(self, name: str, rootfs: Path, venv: str, lines: list[str]) -> str:
        """The image's own pip, chrooted, with this machine's pip settings; returns X.Y."""
        build_dir = rootfs / "tmp" / ".taugrid-build"
        build_dir.mkdir(parents=True)
        (build_dir / "requirements.txt").write_text("\n".join(lines) + "\n")
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}
        env |= {k: os.environ[k] for k in _PIP_ENV if os.environ.get(k)}
        env |= {"PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        env |= {"PIP_NO_INPUT": "1", "PIP_PROGRESS_BAR": "off"}
        ca = _host_ca()
        if ca is not None:
            shutil.copyfile(ca, build_dir / "ca.crt")
            env["PIP_CERT"] = "/tmp/.taugrid-build/ca.crt"
        resolv = rootfs / "etc" / "resolv.conf"
        saved = resolv.read_bytes() if resolv.is_file() and not resolv.is_symlink() else None
        if resolv.exists() or resolv.is_symlink():
            resolv.unlink()
        shutil.copyfile("/etc/resolv.conf", resolv)
        step = f"deps-{name}"
        # The environment goes in whole, never on a command line the log records.
        chroot = ["chroot", str(rootfs)]
        self.run(step, [*chroot, "/usr/bin/python3", "-m", "venv", venv], env=env)
        install = [*chroot, f"{venv}/bin/pip", "install", "--prefer-binary"]
        self.run(step, [*install, "-r", "/tmp/.taugrid-build/requirements.txt"], env=env)
        probe = "import sys; print('%d.%d' % sys.version_info[:2])"
        python = self.run(step, [*chroot, f"{venv}/bin/python3", "-c", probe], env=env)
        shutil.rmtree(build_dir)
        resolv.unlink()
        if saved is not None:
            resolv.write_bytes(saved)
        shutil.rmtree(rootfs / "root" / ".cache", ignore_errors=True)
        return python.strip()

    # --- layer 3: named build contexts -------------------------------------------------------

    def context_dir(self, context: str) -> Path:
        """The directory of a named build context, built (or found cached) by its script."""
        script = CONTEXTS.get(context)
        if script is None:
            raise BuildError(
                f"COPY --from={context}: no such build context (known: {', '.join(CONTEXTS)})"
            )
        lines = self.run(f"context-{context}", [str(REPO / script)]).strip().splitlines()
        found = Path(lines[-1]) if lines else None
        if found is None or not found.is_dir():
            raise BuildError(f"context-{context}: {script} printed no directory")
        return found

    def context(
        self, name: str, copy: ContextCopy, under_tag: str, under_key: str
    ) -> tuple[str, str]:
        """(tag, key) of the layer holding the context's files at the COPY destination."""
        source = (self.context_dir(copy.context) / copy.source).resolve()
        files = sorted(p for p in source.rglob("*") if p.is_file())
        tree = [
            (str(p.relative_to(source)), hashlib.sha256(p.read_bytes()).hexdigest()) for p in files
        ]
        key = _sha("context", RECIPE["context"], under_key, copy.context, copy.dest, tree)
        tag = f"context-{name}-{copy.context}-{key[:16]}"
        if tag in self.tags():
            return tag, key
        started = time.monotonic()
        self.work.mkdir(parents=True, exist_ok=True)
        scratch = f"tmp-{tag}"
        with tempfile.TemporaryDirectory(dir=self.work) as tmp:
            stage = Path(tmp) / "root"
            shutil.copytree(source, stage / copy.dest.lstrip("/"))
            for path in sorted(stage.rglob("*"), reverse=True):
                path.chmod(0o755 if path.is_dir() else 0o644)
                os.utime(path, (EPOCH, EPOCH))
            layer = Path(tmp) / "context.tar"
            argv = ["tar", "--create", "--file", str(layer), "--directory", str(stage)]
            argv += ["--format=gnu", "--sort=name", f"--mtime=@{EPOCH}", "--numeric-owner"]
            argv += ["--owner=0", "--group=0", copy.dest.lstrip("/")]
            self.run(name, argv)
            self._umoci(name, "tag", "--image", f"{self.layout}:{under_tag}", scratch)
            self._umoci(
                name,
                "raw",
                "add-layer",
                "--image",
                f"{self.layout}:{scratch}",
                f"--history.created={_stamp()}",
                f"--history.created_by=COPY --from={copy.context} {copy.source} {copy.dest}",
                str(layer),
            )
        self._retag(scratch, tag)
        self.progress(f"{name}: {copy.context} layer built in {time.monotonic() - started:.0f}s")
        return tag, key

    # --- layer 4: tau -----------------------------------------------------------------------

    def image(self, name: str, wheel: Path) -> Built:
        """Build (or find cached) image NAME with this checkout's wheel on top."""
        cf = parse(DOCKER_DIR / f"{name}.Containerfile")
        repository = dict(cf.config.labels).get(TITLE_LABEL)
        if not repository:
            raise BuildError(f"{cf.path.name}: LABEL {TITLE_LABEL}=<repository> is required")
        self._ensure_layout()
        base_tag, base_key = self.base(cf)
        deps_tag, deps_key = self.deps(name, cf, base_tag, base_key)
        under_tag, under_key = deps_tag, deps_key
        for copy in cf.copies:
            under_tag, under_key = self.context(name, copy, under_tag, under_key)
        venv = cf.arg("TAU_VENV")
        wheel_digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        key = _sha("tau", RECIPE["tau"], under_key, wheel_digest, asdict(cf.config))
        tag = f"{name}-{key[:16]}"
        version = _wheel_version(wheel)
        if tag not in self.tags():
            started = time.monotonic()
            python = json.loads((self.cache / "meta" / f"{deps_tag}.json").read_text())["python"]
            scratch = f"tmp-{tag}"
            with tempfile.TemporaryDirectory(dir=self.work) as tmp:
                stage = Path(tmp) / "root"
                _stage_wheel(wheel, stage, venv, python)
                layer = Path(tmp) / "tau.tar"
                # GNU tar's reproducible form (Debian's umoci 0.4.7 `insert` leaves its layer
                # tarballs without the end-of-archive blocks, which strict readers reject).
                argv = ["tar", "--create", "--file", str(layer), "--directory", str(stage)]
                argv += ["--format=gnu", "--sort=name", f"--mtime=@{EPOCH}", "--numeric-owner"]
                argv += ["--owner=0", "--group=0", venv.lstrip("/")]
                self.run(name, argv)
                self._umoci(name, "tag", "--image", f"{self.layout}:{under_tag}", scratch)
                self._umoci(
                    name,
                    "raw",
                    "add-layer",
                    "--image",
                    f"{self.layout}:{scratch}",
                    f"--history.created={_stamp()}",
                    f"--history.created_by=install {wheel.name} --no-deps into {venv}",
                    str(layer),
                )
            self._configure(name, scratch, cf.config, version)
            self._retag(scratch, tag)
            self.progress(f"{name}: tau layer built in {time.monotonic() - started:.0f}s")
        return Built(name, repository, version, tag, self.tags()[tag], key)

    def _configure(self, name: str, tag: str, config: ImageConfig, version: str) -> None:
        args = ["config", "--image", f"{self.layout}:{tag}", f"--created={_stamp()}"]
        args += ["--no-history", "--clear=config.env", "--clear=config.labels"]
        args += ["--clear=config.entrypoint", "--clear=config.cmd", "--clear=config.exposedports"]
        args += [f"--config.env={k}={v}" for k, v in config.env]
        if config.user:
            args.append(f"--config.user={config.user}")
        if config.workdir:
            args.append(f"--config.workingdir={config.workdir}")
        args += [f"--config.entrypoint={word}" for word in config.entrypoint or ()]
        args += [f"--config.cmd={word}" for word in config.cmd or ()]
        args += [f"--config.exposedports={port}" for port in config.exposed_ports]
        labels = dict(config.labels) | {"org.opencontainers.image.version": version}
        args += [f"--config.label={k}={v}" for k, v in sorted(labels.items())]
        self._umoci(name, *args)

    def _retag(self, old: str, new: str) -> None:
        self._umoci("layout", "tag", "--image", f"{self.layout}:{old}", new)
        self._umoci("layout", "rm", "--image", f"{self.layout}:{old}")

    def _prune(self) -> None:
        """Drop old tau layers once some image has twice KEEP_TOP_LAYERS of them, then collect
        unreferenced blobs (umoci gc rehashes the layout: a minute, so it runs rarely)."""
        tops: dict[str, list[str]] = {}
        for tag in self.tags():
            name, _, key = tag.rpartition("-")
            if name in image_names() and len(key) == 16:
                tops.setdefault(name, []).append(tag)
        if all(len(tags) < 2 * KEEP_TOP_LAYERS for tags in tops.values()):
            return
        for tags in tops.values():
            for tag in tags[: max(len(tags) - KEEP_TOP_LAYERS, 0)]:
                self._umoci("layout", "rm", "--image", f"{self.layout}:{tag}")
        self._umoci("layout", "gc", "--layout", str(self.layout))

    def build(self, names: list[str] | None = None, source: Path = REPO) -> list[Built]:
        """Build NAMES (default: every Containerfile) with the wheel of the tau tree SOURCE."""
        require_tools()
        wanted = names or image_names()
        unknown = sorted(set(wanted) - set(image_names()))
        if unknown:
            raise BuildError(
                f"no Containerfile for image {', '.join(unknown)} under docker/ "
                f"(images: {', '.join(image_names())})"
            )
        with self.locked(), tempfile.TemporaryDirectory(prefix="taugrid-wheel-") as out:
            wheel = build_wheel(Path(out), source)
            built = [self.image(name, wheel) for name in wanted]
            self._prune()
        return built

    def files(self, tag: str) -> set[str]:
        """Paths in the image's filesystem (layers applied in order, whiteouts honoured).

        Listings are cached per layer digest: layers are immutable, and the runtime image's
        dependency layer takes seconds to decompress."""
        paths: set[str] = set()
        for layer in self.manifest(tag)["layers"]:
            for entry in self._layer_listing(layer["digest"]):
                relative = os.path.normpath(entry).lstrip("/")
                if relative == ".":
                    continue
                name = "/" + relative
                base = os.path.basename(name)
                if base == ".wh..wh..opq":
                    parent = os.path.dirname(name)
                    paths = {p for p in paths if not p.startswith(parent + "/")}
                elif base.startswith(".wh."):
                    gone = os.path.join(os.path.dirname(name), base[4:])
                    paths = {p for p in paths if p != gone and not p.startswith(gone + "/")}
                else:
                    paths.add(name)
        return paths

    def _layer_listing(self, digest: str) -> list[str]:
        listing = self.cache / "listings" / f"{digest.replace(':', '-')}.json"
        if listing.exists():
            return json.loads(listing.read_text())
        with tarfile.open(self._blob(digest), "r:*") as layer:
            names = layer.getnames()
        listing.parent.mkdir(parents=True, exist_ok=True)
        listing.write_text(json.dumps(names))
        return names


def build_wheel(out: Path, source: Path = REPO) -> Path:
    """The wheel of the tau tree SOURCE; hatchling builds it reproducibly (fixed timestamps)."""
    env = os.environ | {"SOURCE_DATE_EPOCH": str(EPOCH)}
    argv = [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)]
    result = subprocess.run(argv, cwd=source, env=env, capture_output=True, text=True)
    wheels = sorted(out.glob("*.whl"))
    if result.returncode != 0 or len(wheels) != 1:
        last = (result.stderr or result.stdout).strip().splitlines()[-1:] or [""]
        raise BuildError(f"wheel: hatchling build failed: {last[0]}")
    return wheels[0]


def _wheel_version(wheel: Path) -> str:
    return wheel.name.split("-")[1]


def _stage_wheel(wheel: Path, stage: Path, venv: str, python: str) -> None:
    """Install the wheel into STAGE as if STAGE were the image root, byte-for-byte repeatable."""
    from installer import install
    from installer.destinations import SchemeDictionaryDestination
    from installer.sources import WheelFile

    site = f"{venv}/lib/python{python}/site-packages"
    scheme = {
        "purelib": site,
        "platlib": site,
        "scripts": f"{venv}/bin",
        "data": venv,
        "headers": f"{venv}/include/site/python{python}/taugrid",
    }
    destination = SchemeDictionaryDestination(
        scheme,
        interpreter=f"{venv}/bin/python3",
        script_kind="posix",
        bytecode_optimization_levels=(),
        destdir=str(stage),
    )
    with WheelFile.open(wheel) as source:
        install(source, destination, {"INSTALLER": b"hack.images\n"})
    # Bytecode is compiled by a fresh interpreter: marshal's output depends on the reference
    # counts of the compiling process, so compiling inside a long-lived one (a test session)
    # gave other bytes for the same sources. Hash-checked pycs stay valid whatever the mtime.
    compiled = subprocess.run(
        [
            sys.executable,
            "-m",
            "compileall",
            "-q",
            "--invalidation-mode",
            "checked-hash",
            "-s",
            str(stage),
            "-p",
            "/",
            str(stage / site.lstrip("/")),
        ],
        capture_output=True,
        text=True,
        env=os.environ | {"SOURCE_DATE_EPOCH": str(EPOCH)},
    )
    if compiled.returncode != 0:
        last = (compiled.stdout or compiled.stderr).strip().splitlines()[-1:] or [""]
        raise BuildError(f"bytecode: compileall failed: {last[0]}")
    for path in sorted(stage.rglob("*"), reverse=True):
        if path.is_symlink():
            continue
        executable = path.is_dir() or path.stat().st_mode & 0o111
        path.chmod(0o755 if executable else 0o644)
        os.utime(path, (EPOCH, EPOCH))


def _apt_sources(suite: str) -> list[Path]:
    """This machine's apt sources when they serve SUITE (mmdebstrap's default otherwise)."""
    files: list[Path] = []
    for entry in _APT_SOURCES:
        if entry.is_file():
            files.append(entry)
        elif entry.is_dir():
            files += sorted(p for p in entry.iterdir() if p.suffix in (".list", ".sources"))
    return [p for p in files if suite in p.read_text()]


def _host_ca() -> Path | None:
    for name in _CA_ENV:
        value = os.environ.get(name)
        if value and Path(value).is_file():
            return Path(value)
    return _HOST_CA if _HOST_CA.is_file() else None
