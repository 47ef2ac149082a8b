"""The workspace data PVC as a registry root, reached through short-lived helper Jobs.

Registry verbs run here, on the researcher's machine, as the workspace connection's
identity; the pods only move bytes. A verb costs a few pods, never a standing service:

* read: one pod tars the registry files the verb needs (its `Scope`) and prints them;
  the verb then reads that snapshot locally;
* write: the verb's writes are journaled and one writer pod applies them, checking every
  precondition first (a record must not exist; a compare-and-swap alias must still hold
  the bytes the verb read) so a stale read never overwrites a newer write;
* scan / copy: one pod hashes or copies dataset files and prints a proof per file.

Helper pods use the pinned busybox image `tau run get` uses (or the platform's mirror,
`TAU_HELPER_IMAGE`), run as uid 65532 with the restricted pod security profile, mount only
the data PVC and no ServiceAccount token, and are deleted when they finish. Where every node
is tainted, `TAU_HELPER_NODE_SELECTOR` and `TAU_HELPER_TOLERATIONS` say where they may run.
"""

from __future__ import annotations

import base64
import hashlib
import posixpath
import shlex
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tau import keys
from tau.data import layout
from tau.data.root import ANY, Conflict, DirectoryRoot, Exists, FileStat, Missing, Scope
from tau.errors import RuntimeFailure
from tau.kube import AuthorizationError, KubeClient
from tau.kube.helperpod import READER_TTL, placement, run_job_pod
from tau.kube.resources import PERSISTENT_VOLUME_CLAIMS

UID = 65532
# The kernel caps one environment string at 128 KiB; chunks stay well below it.
CHUNK = 96 * 1024
MAX_PAYLOAD = 768 * 1024
SHORT = 120.0  # reads and writes of small records
LONG = 3600.0  # hashing or copying dataset bytes
STORAGE = "platform operator (workspace storage)"

# Only applets every busybox has: no `printenv`, no `tar -T`. Payloads arrive base64-encoded
# in environment variables `<NAME>_0`, `<NAME>_1`, ... (one string is capped by the kernel).
_DECODE = """decode() {
  k=0
  while :; do
    eval "v=\\${${1}_$k-}"
    [ -n "$v" ] || break
    printf %s "$v"
    k=$((k+1))
  done | base64 -d
}
"""

WRITE = f"""set -eu
{_DECODE}work="$(mktemp -d)"
decode {keys.ENV_HELPER_OPS} > "$work/ops"
cd "$TAU_DATA_DIR"
while read -r op path expect blob; do
  case "$op" in
    create) if [ -e "$path" ]; then echo "tau-registry: exists $path"; exit 10; fi ;;
    put)
      case "$expect" in
        -) ;;
        absent) if [ -e "$path" ]; then echo "tau-registry: conflict $path"; exit 11; fi ;;
        *) now="$(sha256sum "$path" 2>/dev/null | cut -d' ' -f1 || true)"
           if [ "$now" != "$expect" ]; then echo "tau-registry: conflict $path"; exit 11; fi ;;
      esac ;;
  esac
done < "$work/ops"
while read -r op path expect blob; do
  case "$op" in
    create)
      mkdir -p "$(dirname "$path")"
      decode "{keys.ENV_HELPER_BLOB_PREFIX}$blob" > "$path.tau-tmp.$$"
      if ! ln "$path.tau-tmp.$$" "$path" 2>/dev/null; then
        rm -f "$path.tau-tmp.$$"; echo "tau-registry: exists $path"; exit 10
      fi
      rm -f "$path.tau-tmp.$$" ;;
    put)
      mkdir -p "$(dirname "$path")"
      decode "{keys.ENV_HELPER_BLOB_PREFIX}$blob" > "$path.tau-tmp.$$"
      mv -f "$path.tau-tmp.$$" "$path" ;;
    rmtree) rm -rf "$path" ;;
  esac
done < "$work/ops"
echo "tau-registry: ok"
"""

SCAN = """set -eu
cd "$TAU_DATA_DIR"
if [ ! -d "$1" ]; then echo "tau-registry: missing $1"; exit 3; fi
cd "$1"
find . -type f ! -name '*.tau-tmp.*' ! -name '.tau-registry.lock' | sort | while IFS= read -r f; do
  printf 'tau-file %s %s %s\\n' "$(sha256sum "$f" | cut -d' ' -f1)" "$(stat -c %s "$f")" "${f#./}"
done
echo "tau-registry: ok"
"""

COPY = f"""set -eu
{_DECODE}cd "$TAU_DATA_DIR"
src="$1"; dst="$2"
if [ ! -d "$src" ]; then echo "tau-registry: missing $src"; exit 3; fi
files="$(mktemp)"
decode {keys.ENV_HELPER_LIST} > "$files"
while IFS= read -r f; do
  if [ ! -f "$src/$f" ]; then echo "tau-registry: missing $src/$f"; exit 3; fi
  mkdir -p "$(dirname "$dst/$f")"
  cp "$src/$f" "$dst/$f.tau-tmp.$$"
  mv -f "$dst/$f.tau-tmp.$$" "$dst/$f"
  sum="$(sha256sum "$dst/$f" | cut -d' ' -f1)"
  printf 'tau-file %s %s %s\\n' "$sum" "$(stat -c %s "$dst/$f")" "$f"
done < "$files"
echo "tau-registry: ok"
"""


def _snapshot_script(scopes: tuple[Scope, ...]) -> str:
    """Each file as `tau-file PATH` then its base64 lines (base64 never contains `-`)."""
    lines = ["set -eu", 'cd "$TAU_DATA_DIR"', 'list="$(mktemp)"']
    for scope in scopes:
        where = shlex.quote(scope.path)
        depth = f" -maxdepth {scope.depth}" if scope.depth else ""
        names = ""
        if scope.names:
            names = " \\( " + " -o ".join(f"-name {shlex.quote(n)}" for n in scope.names) + " \\)"
        lines.append(
            f"if [ -d {where} ]; then find {where}{depth} -type f{names} "
            "! -name '*.tau-tmp.*' >> \"$list\"; fi"
        )
    lines += [
        "echo tau-snapshot-begin",
        'while IFS= read -r f; do echo "tau-file $f"; base64 "$f"; done < "$list"',
        "echo tau-snapshot-end",
    ]
    return "\n".join(lines) + "\n"


def _chunks(name: str, data: bytes) -> list[dict[str, str]]:
    text = base64.b64encode(data).decode()
    return [
        {"name": f"{name}_{i}", "value": text[start : start + CHUNK]}
        for i, start in enumerate(range(0, len(text), CHUNK))
    ]


def _bounded(env: list[dict[str, str]]) -> list[dict[str, str]]:
    size = sum(len(item["value"]) for item in env)
    if size > MAX_PAYLOAD:
        raise RuntimeFailure(
            f"this registry update is {size // 1024} KiB encoded, over the helper pod's "
            f"{MAX_PAYLOAD // 1024} KiB limit",
            hint="split the dataset into smaller versions",
            owner="researcher (dataset registry)",
        )
    return env


class PodRoot:
    """A data PVC in a namespace, read from a snapshot and written through a journal."""

    def __init__(
        self, kube: KubeClient, namespace: str, pvc: str, scope: tuple[Scope, ...]
    ) -> None:
        self.kube = kube
        self.namespace = namespace
        self.pvc = pvc
        self.scope = scope
        self.label = f'PVC "{pvc}" in namespace "{namespace}"'
        self._dir = tempfile.TemporaryDirectory(prefix="tau-registry-")
        self.local = DirectoryRoot(Path(self._dir.name), self.label)
        self._ops: list[list[str]] = []
        self._blobs: dict[str, bytes] = {}
        self._check_claim()
        self._snapshot()

    def close(self) -> None:
        self._dir.cleanup()

    def __enter__(self) -> PodRoot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- reads -------------------------------------------------------------------------

    def _in_scope(self, path: str) -> None:
        clean = posixpath.normpath(path)
        for scope in self.scope:
            if clean == scope.path or clean.startswith(scope.path + "/"):
                return
        raise AssertionError(f"{path} is outside this verb's registry scope")

    def read(self, path: str) -> bytes | None:
        self._in_scope(path)
        return self.local.read(path)

    def listdir(self, path: str) -> list[str]:
        self._in_scope(path)
        return self.local.listdir(path)

    # --- journaled writes --------------------------------------------------------------

    def create(self, path: str, data: bytes) -> None:
        self._in_scope(path)
        self.local.create(path, data)
        self._journal("create", path, "-", data)

    def put(self, path: str, data: bytes, *, expect: object = ANY) -> None:
        self._in_scope(path)
        if expect is ANY:
            token = "-"
        elif expect is None:
            token = "absent"
        else:
            assert isinstance(expect, bytes)
            token = hashlib.sha256(expect).hexdigest()
        self.local.put(path, data, expect=expect)
        self._journal("put", path, token, data)

    def remove_tree(self, path: str) -> None:
        self._in_scope(path)
        self.local.remove_tree(path)
        self._ops.append(["rmtree", path, "-"])

    def _journal(self, op: str, path: str, token: str, data: bytes) -> None:
        for entry in self._ops:
            if entry[1] == path and entry[0] in ("create", "put"):
                self._blobs[path] = data  # a later write of the same file keeps the first check
                return
        self._ops.append([op, path, token])
        self._blobs[path] = data

    def commit(self) -> None:
        if not self._ops:
            return
        blobs = list(self._blobs)
        lines = []
        for op, path, token in self._ops:
            blob = str(blobs.index(path)) if path in self._blobs else "-"
            lines.append(f"{op} {path} {token} {blob}\n")
        env = _chunks(keys.ENV_HELPER_OPS, "".join(lines).encode())
        for index, path in enumerate(blobs):
            env += _chunks(f"{keys.ENV_HELPER_BLOB_PREFIX}{index}", self._blobs[path])
        ok, output = self._run("write", WRITE, [], _bounded(env), SHORT, writable=True)
        if not ok:
            last = output[-1] if output else ""
            if last.startswith("tau-registry: exists "):
                raise Exists(last.split(" ", 2)[2])
            if last.startswith("tau-registry: conflict "):
                raise Conflict(last.split(" ", 2)[2])
            raise self._failure("writing the registry", output)
        self._ops, self._blobs = [], {}

    # --- data plane --------------------------------------------------------------------

    def scan(self, path: str) -> list[FileStat]:
        ok, lines = self._run("scan", SCAN, [path], [], LONG)
        stats = _proofs(lines)
        if not ok:
            if lines and lines[-1].startswith("tau-registry: missing "):
                raise Missing(path)
            raise self._failure(f"hashing {layout.in_pod(path)}", lines)
        return stats

    def copy(
        self, source: str, destination: str, files: list[str], on_file: Callable[[FileStat], None]
    ) -> None:
        self.commit()  # e.g. `ingesting` lands before the first byte moves
        listing = "".join(f + "\n" for f in files).encode()
        env = _bounded(_chunks(keys.ENV_HELPER_LIST, listing))
        ok, lines = self._run("copy", COPY, [source, destination], env, LONG, writable=True)
        for stat in _proofs(lines):
            on_file(stat)
        if not ok:
            if lines and lines[-1].startswith("tau-registry: missing "):
                raise Missing(lines[-1].split(" ", 2)[2])
            raise self._failure(f"copying {layout.in_pod(source)}", lines)

    # --- pods --------------------------------------------------------------------------

    def _check_claim(self) -> None:
        try:
            claim = self.kube.get_or_none(PERSISTENT_VOLUME_CLAIMS, self.pvc, self.namespace)
        except AuthorizationError:
            return  # the helper pod's own failure will say more
        if claim is None:
            raise RuntimeFailure(
                f'the data PVC "{self.pvc}" does not exist in namespace "{self.namespace}"',
                hint="pass the workspace's data PVC with --pvc",
                owner=STORAGE,
            )

    def _snapshot(self) -> None:
        ok, lines = self._run("read", _snapshot_script(self.scope), [], [], SHORT)
        if not ok or "tau-snapshot-end" not in lines:
            raise self._failure("reading the registry", lines)
        body = lines[lines.index("tau-snapshot-begin") + 1 : lines.index("tau-snapshot-end")]
        files: dict[str, list[str]] = {}
        current: list[str] | None = None
        for line in body:
            if line.startswith("tau-file "):
                current = files.setdefault(line[len("tau-file ") :], [])
            elif current is not None:
                current.append(line.strip())
        for path, encoded in files.items():
            clean = posixpath.normpath(path)
            if clean.startswith(("/", "..")):
                continue  # never written outside the snapshot directory
            target = self.local.directory / clean
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(base64.b64decode("".join(encoded)))

    def _failure(self, doing: str, lines: list[str]) -> RuntimeFailure:
        detail = next((line for line in reversed(lines) if line.strip()), "no output")
        return RuntimeFailure(
            f"{doing} on {self.label} failed: {detail[:300]}",
            hint=f"the data PVC must be mounted read-write and writable by uid {UID}",
            owner=STORAGE,
        )

    def _run(
        self,
        role: str,
        script: str,
        args: list[str],
        env: list[dict[str, str]],
        timeout: float,
        *,
        writable: bool = False,
    ) -> tuple[bool, list[str]]:
        job = helper_job(self.namespace, self.pvc, role, script, args, env, timeout, writable)
        phase, lines = self._execute(job, timeout)
        return phase == "Succeeded", lines

    def _execute(self, job: dict[str, Any], timeout: float) -> tuple[str, list[str]]:
        """(phase, output) of the helper Job's pod; the Job is gone afterwards."""
        done = run_job_pod(
            self.kube, self.namespace, job, container="registry", timeout=timeout + 30
        )
        if done is None:
            raise RuntimeFailure(
                f"registry helper Job {self.namespace}/{job['metadata']['name']} did not "
                f"finish within {timeout:g}s",
                hint=f"check that {self.label} is bound and mountable",
                owner=STORAGE,
            )
        return done


def helper_job(
    namespace: str,
    pvc: str,
    role: str,
    script: str,
    args: list[str],
    env: list[dict[str, str]],
    timeout: float,
    writable: bool,
) -> dict[str, Any]:
    """A one-pod Job, not a bare pod: the researcher role creates Jobs (Kueue's path for
    everything else it runs) and grants no pod create."""
    where = placement()
    image = where.pop("image")
    labels = {keys.MANAGED_BY: keys.MANAGED_BY_VALUE, keys.ROLE: f"registry-{role}"}
    pod = {
        "metadata": {"labels": dict(labels)},
        "spec": {
            "restartPolicy": "Never",
            "activeDeadlineSeconds": int(timeout),
            "automountServiceAccountToken": False,
            "securityContext": {
                "runAsNonRoot": True,
                "runAsUser": UID,
                "runAsGroup": UID,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "containers": [
                {
                    "name": "registry",
                    "image": image,
                    "command": ["sh", "-c", script, f"tau-{role}", *args],
                    "env": [{"name": keys.ENV_DATA_DIR, "value": layout.MOUNT}, *env],
                    "securityContext": {
                        "allowPrivilegeEscalation": False,
                        "capabilities": {"drop": ["ALL"]},
                    },
                    "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                    "volumeMounts": [
                        {"name": "data", "mountPath": layout.MOUNT, "readOnly": not writable}
                    ],
                }
            ],
            "volumes": [
                {
                    "name": "data",
                    "persistentVolumeClaim": {"claimName": pvc, "readOnly": not writable},
                }
            ],
            **where,
        },
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"tau-data-{role}-{uuid.uuid4().hex[:8]}",
            "namespace": namespace,
            "labels": dict(labels),
        },
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": int(timeout),
            # Left behind only if this process dies mid-run; the job controller cleans up.
            "ttlSecondsAfterFinished": READER_TTL,
            "template": pod,
        },
    }


def _proofs(lines: list[str]) -> list[FileStat]:
    stats = []
    for line in lines:
        if line.startswith("tau-file "):
            _, digest, size, path = line.split(" ", 3)
            stats.append(FileStat(path, int(size), digest))
    return stats
