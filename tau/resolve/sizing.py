"""How big a run is: GPU, worker and node counts, the GPU resource, CPU and memory.

A selected workload profile's counts are authoritative (the platform sized its nodes for
them); a run config count that differs is an error, one that matches is recorded as the
profile's. Without a profile a Job's GPU count must be proven: by compute.gpus or by the
count a policy.shape spells.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Literal, NamedTuple

from tau import keys
from tau.errors import ValidationError
from tau.render.intent import Resources
from tau.resolve.layers import RESEARCHER, Stack
from tau.resolve.provenance import field_path
from tau.runconfig.models import Compute, Execution, Policy

_SHAPE_COUNT = re.compile(r"^(\d+)x")
Role = Literal["", "head", "worker"]


class Counts(NamedTuple):
    gpus: int
    workers: int
    gpus_per_worker: int
    nodes: int


def resolve_counts(stack: Stack, engine: str) -> Counts:
    model = stack.model
    compute = model.compute
    profile = stack.profile
    if engine == "job":
        nodes = model.execution.nodes if model.execution else 1
        gpus = compute.gpus if compute else None
        if profile:
            _check_profile_count(stack, field_path(Compute, "gpus"), gpus, profile.gpus_per_worker)
            if stack.config.is_set(Execution, "nodes"):
                _check_profile_count(
                    stack, field_path(Execution, "nodes"), nodes, profile.worker_count
                )
            gpus = stack.record(
                field_path(Compute, "gpus"), profile.gpus_per_worker, stack.prof("gpusPerWorker")
            )
            nodes = profile.worker_count
            stack.record(field_path(Execution, "nodes"), nodes, stack.prof("workerCount"))
            return Counts(gpus, 1, 0, nodes)
        if gpus is not None:
            stack.record(field_path(Compute, "gpus"), gpus, stack.file(Compute, "gpus"))
        else:
            gpus = _gpus_from_shape(stack)
        if stack.config.is_set(Execution, "nodes"):
            stack.record(field_path(Execution, "nodes"), nodes, stack.file(Execution, "nodes"))
        return Counts(gpus, 1, 0, nodes)
    workers = compute.workers if compute else 1
    gpw = compute.gpus_per_worker if compute else None
    if profile:
        if stack.config.is_set(Compute, "workers"):
            _check_profile_count(
                stack, field_path(Compute, "workers"), workers, profile.worker_count
            )
        _check_profile_count(
            stack, field_path(Compute, "gpus_per_worker"), gpw, profile.gpus_per_worker
        )
        workers = stack.record(
            field_path(Compute, "workers"), profile.worker_count, stack.prof("workerCount")
        )
        gpw = stack.record(
            field_path(Compute, "gpus_per_worker"),
            profile.gpus_per_worker,
            stack.prof("gpusPerWorker"),
        )
        return Counts(0, workers, gpw, 1)
    stack.record(
        field_path(Compute, "workers"),
        workers,
        stack.file(Compute, "workers")
        if stack.config.is_set(Compute, "workers")
        else stack.default(),
    )
    if gpw is None:
        gpw = stack.record(field_path(Compute, "gpus_per_worker"), 1, stack.default())
    else:
        stack.record(
            field_path(Compute, "gpus_per_worker"), gpw, stack.file(Compute, "gpus_per_worker")
        )
    return Counts(0, workers, gpw, 1)


def _check_profile_count(stack: Stack, dotted: str, mine: int | None, theirs: int) -> None:
    assert stack.profile is not None
    if mine is not None and mine != theirs:
        raise ValidationError(
            f"{dotted}={mine} conflicts with authoritative workload profile "
            f"{stack.profile.name!r} value {theirs}",
            hint=f"remove {dotted} or select a matching profile",
            owner=RESEARCHER,
        )


def _gpus_from_shape(stack: Stack) -> int:
    shape = stack.model.policy.shape if stack.model.policy else None
    if shape:
        match = _SHAPE_COUNT.match(shape)
        if not match:
            raise ValidationError(
                f"{field_path(Policy, 'shape')} {shape!r} does not prove a direct Job GPU count; "
                f"set {field_path(Compute, 'gpus')} explicitly",
                owner=RESEARCHER,
            )
        return stack.record(
            field_path(Compute, "gpus"), int(match.group(1)), stack.file(Policy, "shape")
        )
    raise ValidationError(
        "engine=job has no resolved GPU cardinality; select a ready TauCluster workload "
        "profile or set compute.gpus for local config validation",
        owner=RESEARCHER,
    )


def resolve_gpu_resource(stack: Stack) -> str:
    """The extended resource GPU workers request: whole GPUs, or the MIG slice named."""
    compute = stack.model.compute
    if compute is not None and compute.mig_profile:
        resource = keys.NVIDIA_MIG_PREFIX + compute.mig_profile
        return stack.record("compute.gpu_resource", resource, stack.file(Compute, "mig_profile"))
    return keys.NVIDIA_GPU


def resolve_resources(stack: Stack, role: Role) -> Resources:
    """The CPU and memory of a pod (`role` ""), the Ray head or a Ray worker."""
    c = stack.model.compute or Compute()
    prefix, resources = {
        "": ("", Resources(c.cpu_request, c.memory_request, c.cpu_limit, c.memory_limit)),
        "head": (
            "head_",
            Resources(
                c.head_cpu_request, c.head_memory_request, c.head_cpu_limit, c.head_memory_limit
            ),
        ),
        "worker": (
            "worker_",
            Resources(
                c.worker_cpu_request,
                c.worker_memory_request,
                c.worker_cpu_limit,
                c.worker_memory_limit,
            ),
        ),
    }[role]
    for name, value in asdict(resources).items():
        if value:
            stack.record(
                field_path(Compute, prefix + name), value, stack.file(Compute, prefix + name)
            )
    return resources
