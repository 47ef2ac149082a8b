"""The resolved intent of a served endpoint, and what RayService and Deployment share.

`tau.serving` turns `tau serve deploy` flags, the workload profile and the namespace's
LocalQueue into one `ServeIntent`; `rayservice` and `deployment` only turn it into objects.
Everything a flag can get wrong has been refused before this point, except what only the
object shape can tell (names, the queue, colliding volumes), which is refused here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tau import keys
from tau.jsontypes import JSONObject
from tau.render.env import DATA_DIR
from tau.render.errors import RenderError
from tau.render.intent import Mount, Placement, SecretRef
from tau.render.meta import clean_annotations, clean_labels
from tau.render.metadata import image_digest
from tau.render.names import DNS1123_LABEL, LABEL_MAX, check_namespace
from tau.render.placement import placement_annotations, placement_labels
from tau.render.security import apply_restricted, profile_security
from tau.render.volumes import SHM_PATH

Kind = Literal["rayservice", "deployment"]
VolumeKind = Literal["pvc", "emptyDir", "configMap", "secret"]

FLAGS = "researcher: tau serve deploy flags"
SHM_VOLUME = "tau-shm"
CHECKPOINT_VOLUME = "tau-checkpoint"


@dataclass(frozen=True)
class Volume:
    """`--volume NAME=KIND[:SOURCE]`: SOURCE is the claim, ConfigMap or Secret name."""

    name: str
    kind: VolumeKind
    source: str | None = None


@dataclass(frozen=True)
class Checkpoint:
    """The model state an endpoint loads: `path` on `pvc`, which is mounted at /data."""

    path: str
    pvc: str


@dataclass(frozen=True)
class Autoscaling:
    min_replicas: int
    max_replicas: int
    target_qps: int
    scale_down_delay: int


@dataclass(frozen=True)
class Probes:
    """HTTP probe paths of a Deployment's main container (all on one port)."""

    readiness: str | None = None
    startup: str | None = None
    liveness: str | None = None
    startup_failure_threshold: int | None = None

    @property
    def any(self) -> bool:
        return bool(self.readiness or self.startup or self.liveness)


@dataclass(frozen=True)
class ServeIntent:
    name: str
    namespace: str
    kind: Kind
    image: str
    placement: Placement
    gpus: int = 0
    nodes: int = 1
    # None: the kind's default (1, and no `num_replicas` in the Serve config).
    replicas: int | None = None
    autoscaling: Autoscaling | None = None
    cpu: str | None = None
    memory: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    env_secret: tuple[tuple[str, SecretRef], ...] = ()
    volumes: tuple[Volume, ...] = ()
    mounts: tuple[Mount, ...] = ()
    checkpoint: Checkpoint | None = None
    shm_size: str | None = None
    init_containers: tuple[tuple[str, str], ...] = ()
    sidecars: tuple[tuple[str, str], ...] = ()
    # RayService.
    import_path: str = "serve:app"
    app_args: JSONObject | None = None
    port: int = 8000
    ray_version: str = "2.40.0"
    pip: tuple[str, ...] = ()
    # Head container args (legacy `--args`) or, for a Deployment, the main container's.
    args: tuple[str, ...] = ()
    # Deployment.
    command: tuple[str, ...] = ()
    deployment_ports: tuple[int, ...] = ()
    probes: Probes = field(default_factory=Probes)
    service_port: int = 0
    service_target_port: int = 0
    # Every pod passes Pod Security `restricted` (the serving namespace may enforce it).
    restricted: bool = False

    @property
    def multi_node(self) -> bool:
        return self.kind == "rayservice" and self.nodes > 1


def check_name(intent: ServeIntent, *, limit: int = LABEL_MAX) -> None:
    """Served names become Service names (DNS-1035: they must start with a letter)."""
    name = intent.name
    if not name or not DNS1123_LABEL.match(name) or not name[0].isalpha():
        raise RenderError(
            f"service name {name!r} must be a DNS-1035 label (lowercase letters, digits and '-',"
            " starting with a letter and ending with a letter or digit)",
            owner=FLAGS,
        )
    if len(name) > limit:
        raise RenderError(
            f"service name {name!r} is too long ({len(name)} chars; at most {limit} for"
            f" --kind {intent.kind})",
            owner=FLAGS,
        )
    check_namespace(intent.namespace)


def secure(intent: ServeIntent, pod: JSONObject) -> None:
    """The restricted fields on a finished pod spec, or only what the profile asks for."""
    if intent.restricted:
        apply_restricted(
            pod,
            intent.placement,
            setting=f'Pod Security "restricted" of namespace {intent.namespace}',
            hint="serve with a profile without root/privileged settings",
        )
    else:
        profile_security(pod, intent.placement)


def require_queue(intent: ServeIntent, what: str) -> None:
    if not intent.placement.queue:
        raise RenderError(
            f"render {what}: Kueue LocalQueue is required",
            hint="serve into a namespace with a platform-managed default LocalQueue",
            owner="platform operator (namespace onboarding)",
        )


def service_labels(intent: ServeIntent) -> dict[str, str]:
    """Labels of the endpoint object itself: ownership, profile and Kueue admission."""
    return clean_labels(
        {
            keys.MANAGED_BY: keys.MANAGED_BY_VALUE,
            keys.SERVICE: intent.name,
            **placement_labels(intent.placement),
        }
    )


def pod_labels(intent: ServeIntent) -> dict[str, str]:
    labels: dict[str, str | None] = {
        keys.MANAGED_BY: keys.MANAGED_BY_VALUE,
        keys.SERVICE: intent.name,
        keys.PROFILE: intent.placement.profile,
    }
    if intent.placement.gpu_class:
        labels[keys.GPU_CLASS] = intent.placement.gpu_class
    return clean_labels(labels)


def service_annotations(intent: ServeIntent) -> dict[str, str]:
    """Which profile revision admitted the render, what image runs and what model it loads."""
    total_gpus = intent.gpus * max(intent.nodes, 1)
    return clean_annotations(
        {
            keys.NAMESPACE: intent.namespace,
            keys.IMAGE: intent.image,
            keys.IMAGE_DIGEST: image_digest(intent.image),
            keys.CHECKPOINT_URI: (
                f"pvc://{intent.checkpoint.pvc}{intent.checkpoint.path}"
                if intent.checkpoint
                else None
            ),
            keys.GPU_COUNT: str(total_gpus) if total_gpus else None,
            **placement_annotations(intent.placement),
        }
    )


def managed_env(intent: ServeIntent) -> dict[str, str]:
    """Tau-set variables; a user `--env` or `--env-secret` may not replace any of them."""
    env: dict[str, str] = {}
    if intent.placement.profile:
        env[keys.ENV_PROFILE] = intent.placement.profile
    if intent.checkpoint:
        env[keys.ENV_DATA_DIR] = DATA_DIR
        env[keys.ENV_MODEL_PATH] = intent.checkpoint.path
    return env


def container_env(
    intent: ServeIntent, managed: dict[str, str], *, repeatable: frozenset[str] = frozenset()
) -> list[JSONObject]:
    """Managed plus user literal and secret env, sorted by name.

    A user value for a managed name is refused, except that `repeatable` names may be
    repeated with exactly the managed value (the caller has already checked equality).
    """
    literal = {name: value for name, value in intent.env if name not in repeatable}
    secrets = dict(intent.env_secret)
    for name in sorted({*literal, *secrets}):
        if name in managed:
            flag = "--env-secret" if name in secrets else "--env"
            raise RenderError(
                f"{flag} {name} is set by Tau for this endpoint and cannot be overridden",
                hint=f"remove {flag} {name}",
                owner=FLAGS,
            )
    entries: dict[str, JSONObject] = {
        name: {"name": name, "value": value} for name, value in {**managed, **literal}.items()
    }
    for name, ref in secrets.items():
        entries[name] = {
            "name": name,
            "valueFrom": {"secretKeyRef": {"name": ref.secret, "key": ref.key}},
        }
    return [entries[name] for name in sorted(entries)]


def volumes_and_mounts(intent: ServeIntent) -> tuple[list[JSONObject], list[JSONObject]]:
    """User volumes, the read-only checkpoint PVC at /data and the `--shm-size` tmpfs."""
    names = {volume.name for volume in intent.volumes}
    paths = {mount.path for mount in intent.mounts}
    volumes = [_volume(volume) for volume in intent.volumes]
    mounts = []
    for mount in intent.mounts:
        entry: JSONObject = {"name": mount.volume, "mountPath": mount.path}
        if mount.read_only:
            entry["readOnly"] = True
        mounts.append(entry)
    if intent.checkpoint:
        if CHECKPOINT_VOLUME in names or DATA_DIR in paths:
            raise RenderError(
                f"--checkpoint mounts PVC {intent.checkpoint.pvc} at {DATA_DIR}, so no --volume"
                f" may be named {CHECKPOINT_VOLUME} and no --mount may use {DATA_DIR}",
                owner=FLAGS,
            )
        volumes.append(
            {
                "name": CHECKPOINT_VOLUME,
                "persistentVolumeClaim": {"claimName": intent.checkpoint.pvc, "readOnly": True},
            }
        )
        mounts.append({"name": CHECKPOINT_VOLUME, "mountPath": DATA_DIR, "readOnly": True})
    if intent.shm_size:
        if SHM_VOLUME in names or SHM_PATH in paths:
            raise RenderError(
                f"--shm-size adds volume {SHM_VOLUME} at {SHM_PATH}, so no --volume may be"
                f" named {SHM_VOLUME} and no --mount may use {SHM_PATH}",
                owner=FLAGS,
            )
        volumes.append(
            {"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": intent.shm_size}}
        )
        mounts.append({"name": SHM_VOLUME, "mountPath": SHM_PATH})
    return volumes, mounts


def _volume(volume: Volume) -> JSONObject:
    if volume.kind == "pvc":
        return {"name": volume.name, "persistentVolumeClaim": {"claimName": volume.source}}
    if volume.kind == "configMap":
        return {"name": volume.name, "configMap": {"name": volume.source}}
    if volume.kind == "secret":
        return {"name": volume.name, "secret": {"secretName": volume.source}}
    return {"name": volume.name, "emptyDir": {}}


def resources(intent: ServeIntent, *, gpus: int) -> dict[str, dict[str, str]]:
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    if intent.cpu:
        requests["cpu"] = intent.cpu
    if intent.memory:
        requests["memory"] = intent.memory
        limits["memory"] = intent.memory
    if gpus > 0:
        requests[keys.NVIDIA_GPU] = str(gpus)
        limits[keys.NVIDIA_GPU] = str(gpus)
    out = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out


def extra_containers(pairs: tuple[tuple[str, str], ...]) -> list[JSONObject]:
    return [{"name": name, "image": image} for name, image in pairs]
