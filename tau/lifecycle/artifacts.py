"""`tau run get`: durable results on the run's PVC, read by a short-lived reader Job.

The result location comes from the workload's annotations (`tau.azure.com/result-path`,
`result-pvc`) or from explicit `--path/--pvc` (external or deleted Jobs). The reader mounts the
PVC read-only, runs one `ls` or `base64`, and is deleted; a requested artifact must stay inside
the result path. A file travels base64-encoded because the pod log is read as lines, which
would drop its final newline.

The reader is a batch Job, not a bare pod: the researcher role creates Jobs (and reads pod
logs) already, while bare `pods` create would let any pod bypass Kueue; so `tau run get`
needs no permission beyond `tau-researcher-v1`. It carries no queue name, so Kueue leaves it
alone and it never waits behind queued runs for its 10m of CPU.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
import uuid
from dataclasses import dataclass

from tau import keys
from tau.errors import RuntimeFailure, UsageError
from tau.jsontypes import JSONObject
from tau.kube import KubeClient, KubeError
from tau.kube.helperpod import READER_TTL, placement, run_job_pod
from tau.kube.resources import JOBS, RAY_JOBS
from tau.run.results import inside

MARKER = ".tau-artifacts-complete"
READER_TIMEOUT = 120.0


@dataclass(frozen=True)
class Location:
    path: str
    pvc: str
    publication: str = ""
    publication_id: str = ""
    checkpoint: str = ""


def locate(kube: KubeClient, namespace: str, name: str, path: str, pvc: str) -> Location:
    if path or pvc:
        if not (path and pvc):
            raise UsageError("--path and --pvc must be given together")
        if not path.startswith("/"):
            raise UsageError(f"--path must be absolute; got {path!r}")
        return Location(posixpath.normpath(path), pvc)
    found = []
    for resource in (JOBS, RAY_JOBS):
        try:
            obj = kube.get_or_none(resource, name, namespace)
        except KubeError as error:
            if getattr(error, "resource_missing", False):
                continue
            raise
        annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
        if annotations.get(keys.RESULT_PATH) and annotations.get(keys.RESULT_PVC):
            found.append(annotations)
    if len(found) > 1:
        raise UsageError(
            f'both a Job and a RayJob named "{name}" carry result annotations; pass --path '
            "and --pvc to choose"
        )
    if not found:
        raise UsageError(
            f'run "{name}" in namespace "{namespace}" has no result annotations '
            f"({keys.RESULT_PATH}, {keys.RESULT_PVC})",
            hint="pass both --path and --pvc for an external or deleted Job; tau runs record "
            "them when storage.output is on a PVC",
        )
    a = found[0]
    return Location(
        a[keys.RESULT_PATH],
        a[keys.RESULT_PVC],
        a.get(keys.ARTIFACT_PUBLICATION, ""),
        a.get(keys.ARTIFACT_PUBLICATION_ID, ""),
        a.get(keys.CHECKPOINT_ARTIFACT, ""),
    )


def is_directory(path: str) -> bool:
    return path.endswith("/") or not posixpath.splitext(path.rstrip("/"))[1]


def reader_job(namespace: str, pvc: str, mount: str, script: str, path: str) -> JSONObject:
    """The reader, its pod placed like every helper pod (the platform's TAU_HELPER_* knobs)."""
    where = placement()
    restricted = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "runAsUser": 65532,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    labels = {keys.MANAGED_BY: keys.MANAGED_BY_VALUE, keys.ROLE: "reader"}
    pod = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": "reader",
                "image": where.pop("image"),
                "command": ["sh", "-c", script, "tau-get", path],
                "securityContext": restricted,
                "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}},
                "volumeMounts": [{"name": "results", "mountPath": mount, "readOnly": True}],
            }
        ],
        "volumes": [
            {"name": "results", "persistentVolumeClaim": {"claimName": pvc, "readOnly": True}}
        ],
        **where,
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"tau-get-{uuid.uuid4().hex[:10]}",
            "namespace": namespace,
            "labels": dict(labels),
        },
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": int(READER_TIMEOUT),
            # Left behind only if this process dies mid-read; the job controller cleans up.
            "ttlSecondsAfterFinished": READER_TTL,
            "template": {"metadata": {"labels": dict(labels)}, "spec": pod},
        },
    }


def read_with_job(kube: KubeClient, namespace: str, job: JSONObject) -> str:
    """The reader Job's output; a failed or unfinished read is one runtime error."""
    done = run_job_pod(kube, namespace, job, container="reader", timeout=READER_TIMEOUT)
    if done is None:
        raise RuntimeFailure(
            f"reader Job {namespace}/{job['metadata']['name']} did not finish within "
            f"{READER_TIMEOUT:g}s",
            hint="check that the PVC is bound and mountable in this namespace",
            owner="platform operator (storage)",
        )
    phase, lines = done
    text = "\n".join(lines)
    if phase == "Failed":
        raise RuntimeFailure(f"reading results failed: {text.strip()[:300]}")
    return text


def mount_point(path: str) -> str:
    """The PVC is mounted where the run mounted it: the first path segment (e.g. /data)."""
    parts = [p for p in path.split("/") if p]
    return "/" + parts[0] if parts else "/data"


def check_published(kube: KubeClient, namespace: str, where: Location) -> None:
    if where.publication != "staged" or not where.publication_id:
        return
    marker = posixpath.join(where.path, ".tau-artifacts", where.publication_id, MARKER)
    job = reader_job(namespace, where.pvc, mount_point(where.path), 'cat -- "$1" || true', marker)
    content = read_with_job(kube, namespace, job).strip()
    if content != f"complete {where.publication_id}":
        raise RuntimeFailure(
            f"results at {where.path} are not published yet (no completion marker for "
            f"publication {where.publication_id})",
            hint="the run may still be running or failed before publishing",
            owner="researcher",
        )


def fetch(
    kube: KubeClient, namespace: str, name: str, *, artifact: str, path: str, pvc: str
) -> JSONObject:
    where = locate(kube, namespace, name, path, pvc)
    target = inside(where.path, artifact) if artifact else where.path
    check_published(kube, namespace, where)
    mount = mount_point(where.path)
    if not artifact and is_directory(target):
        job = reader_job(namespace, where.pvc, mount, 'ls -1Ap -- "$1"', target)
        entries = [e for e in read_with_job(kube, namespace, job).splitlines() if e]
        return {"path": target, "pvc": where.pvc, "directory": True, "entries": entries,
                "checkpoint": where.checkpoint}  # fmt: skip
    job = reader_job(namespace, where.pvc, mount, 'base64 "$1"', target)
    return {"path": target, "pvc": where.pvc, "directory": False,
            "content": decoded(read_with_job(kube, namespace, job), target)}  # fmt: skip


def decoded(text: str, path: str) -> str:
    try:
        data = base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        raise RuntimeFailure(
            f"the reader's output for {path} is not base64",
            hint=f"{keys.ENV_HELPER_IMAGE} must provide sh and base64 (busybox does)",
            owner="platform operator",
        ) from None
    return data.decode("utf-8", errors="replace")
