"""Deciding an endpoint: checked flags + the selected workload profile + its queue.

The profile is authoritative for admission (queue, priorities, placement, GPUs per worker,
worker count): a flag may restate it but never contradict it, so an endpoint can only ever
ask Kueue for the shape the platform published.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tau.errors import ValidationError
from tau.profiles.select import Selection
from tau.render.endpoint import Autoscaling, Checkpoint, Probes, ServeIntent, Volume
from tau.render.intent import Mount, Placement, SecretRef
from tau.resolve.placement import PLACEMENT_TOPOLOGY
from tau.serving import flags
from tau.serving.request import (
    DEFAULT_PORT,
    DEFAULT_RAY_QPS,
    DEFAULT_SCALE_DOWN_DELAY,
    DeployRequest,
)

RESEARCHER = "researcher: --profile (choose a serving profile that fits)"
MULTI_NODE_PLACEMENT = "multi-node-nccl"
DEFAULT_RAY_VERSION = "2.40.0"
_RAY_TAG = re.compile(r"ray-?(\d+\.\d+\.\d+)")


def ray_version(request: DeployRequest) -> str:
    """`--ray-version`, else the version in the image tag (`…:py3.12-ray2.56.0`), else 2.40.0."""
    if request.ray_version:
        return request.ray_version
    tag = request.image.split("@", 1)[0].rpartition("/")[2].partition(":")[2]
    match = _RAY_TAG.search(tag) or re.match(r"^(\d+\.\d+\.\d+)", tag)
    return match.group(1) if match else DEFAULT_RAY_VERSION


def placement(selection: Selection, queue: str) -> Placement:
    profile = selection.profile
    priorities = profile.get("priorities") or {}
    topology: tuple[tuple[str, str], ...] = ()
    if profile.get("topologies") and profile.get("placement") in PLACEMENT_TOPOLOGY:
        topology = (PLACEMENT_TOPOLOGY[profile["placement"]],)
    return Placement(
        queue=queue,
        topology=profile.get("placement"),
        workload_priority_class=priorities.get("workloadPriorityClassName"),
        pod_priority_class=priorities.get("podPriorityClassName"),
        topology_annotations=topology,
        profile=selection.name,
        cluster_generation=selection.generation,
        profile_set_hash=selection.profile_set_hash,
    )


def check_shape(request: DeployRequest, profile: dict[str, Any]) -> tuple[int, int]:
    """(GPUs per pod, nodes) the profile admits; flags may only restate them."""
    name = profile.get("name")
    gpus = int(profile.get("gpusPerWorker") or 0)
    workers = int(profile.get("workerCount") or 1)
    if (profile.get("executionTarget") or "singleCluster") != "singleCluster":
        raise ValidationError(
            f'workload profile "{name}" dispatches through {profile["executionTarget"]};'
            " serving needs a singleCluster profile",
            owner=RESEARCHER,
        )
    if request.gpus is not None and request.gpus != gpus:
        raise ValidationError(
            f'--gpus {request.gpus} does not match workload profile "{name}"'
            f" (gpusPerWorker {gpus})",
            hint="drop --gpus or choose a profile with that many GPUs per worker",
            owner=RESEARCHER,
        )
    if request.nodes:
        problems = []
        if profile.get("mode") != "fixed":
            problems.append(f"mode {profile.get('mode')} (needs fixed)")
        if profile.get("placement") != MULTI_NODE_PLACEMENT:
            problems.append(f"placement {profile.get('placement')} (needs {MULTI_NODE_PLACEMENT})")
        if gpus < 1:
            problems.append("no GPUs per worker (needs >= 1)")
        if workers != request.nodes:
            problems.append(f"workerCount {workers} (--nodes is {request.nodes})")
        if problems:
            raise ValidationError(
                f"--nodes {request.nodes} needs a multi-node serving profile; workload profile"
                f' "{name}" has {", ".join(problems)}',
                owner=RESEARCHER,
            )
        return gpus, request.nodes
    if workers > 1:
        how = (
            f"pass --nodes {workers}"
            if request.rayservice
            else "--kind deployment runs one pod per replica"
        )
        raise ValidationError(
            f'workload profile "{name}" spans {workers} workers; {how}, or choose a'
            " single-worker profile",
            owner=RESEARCHER,
        )
    return gpus, 1


def image(request: DeployRequest, profile_name: str) -> str:
    if not request.image:
        raise ValidationError(
            f'no image: profile "{profile_name}" declares no runtime image and --image was not set',
            hint="pass --image with a pinned image",
            owner=RESEARCHER,
        )
    return request.image


def autoscaling(request: DeployRequest) -> Autoscaling | None:
    if request.max_replicas <= 0:
        return None
    qps = request.target_qps or (DEFAULT_RAY_QPS if request.rayservice else 0)
    return Autoscaling(
        min_replicas=1 if request.min_replicas is None else request.min_replicas,
        max_replicas=request.max_replicas,
        target_qps=qps,
        scale_down_delay=(
            DEFAULT_SCALE_DOWN_DELAY
            if request.scale_down_delay is None
            else request.scale_down_delay
        ),
    )


@dataclass(frozen=True)
class Parsed:
    """Every flag value parsed offline, so a malformed one fails before any cluster read."""

    env: tuple[tuple[str, str], ...]
    env_secret: tuple[tuple[str, SecretRef], ...]
    volumes: tuple[Volume, ...]
    mounts: tuple[Mount, ...]
    init_containers: tuple[tuple[str, str], ...]
    sidecars: tuple[tuple[str, str], ...]
    app_args: dict[str, Any] | None
    args: tuple[str, ...]
    deployment_ports: tuple[int, ...]


def parse(request: DeployRequest) -> Parsed:
    volumes = flags.volumes(request.volume)
    return Parsed(
        env=flags.env_pairs(request.env),
        env_secret=flags.env_secrets(request.env_secret),
        volumes=volumes,
        mounts=flags.mounts(request.mount, volumes),
        init_containers=flags.containers("--init", request.init),
        sidecars=flags.containers("--sidecar", request.sidecar),
        app_args=flags.app_args(request.app_args) if request.app_args else None,
        args=tuple(request.arg) if request.arg else flags.split_args(request.args),
        deployment_ports=flags.ports("--deployment-port", request.deployment_ports),
    )


def build(
    request: DeployRequest,
    parsed: Parsed,
    selection: Selection,
    queue: str,
    checkpoint: Checkpoint | None,
    restricted: bool = False,
) -> ServeIntent:
    """The endpoint's intent; `queue` is the resolved (or, offline, the profile's) LocalQueue;
    `restricted`: the namespace may enforce Pod Security restricted (see podsecurity)."""
    gpus, nodes = check_shape(request, selection.profile)
    return ServeIntent(
        name=request.name,
        namespace=request.namespace,
        kind=request.kind,  # type: ignore[arg-type]
        image=image(request, selection.name),
        placement=placement(selection, queue),
        gpus=gpus,
        nodes=nodes,
        replicas=request.replicas,
        autoscaling=autoscaling(request),
        cpu=request.cpu or None,
        memory=request.memory or None,
        env=parsed.env,
        env_secret=parsed.env_secret,
        volumes=parsed.volumes,
        mounts=parsed.mounts,
        checkpoint=checkpoint,
        shm_size=request.shm_size or None,
        init_containers=parsed.init_containers,
        sidecars=parsed.sidecars,
        import_path=request.import_path or "serve:app",
        app_args=parsed.app_args,
        port=request.port or DEFAULT_PORT,
        ray_version=ray_version(request) if request.rayservice else DEFAULT_RAY_VERSION,
        pip=tuple(request.runtime_pip),
        args=parsed.args,
        command=tuple(request.command),
        deployment_ports=parsed.deployment_ports,
        probes=Probes(
            readiness=request.readiness_path or None,
            startup=request.startup_path or None,
            liveness=request.liveness_path or None,
            startup_failure_threshold=request.startup_failure_threshold or None,
        ),
        service_port=request.service_port,
        service_target_port=request.service_target_port,
        restricted=restricted,
    )
