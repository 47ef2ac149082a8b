"""Served endpoints TauGrid must render, built the way `tau serve deploy` builds them:
checked flags planned against a selected workload profile."""

from __future__ import annotations

import dataclasses

from serving.profiles import CPU, GPU, MULTI, NAMESPACE, selection

from tau.render.endpoint import Checkpoint, ServeIntent
from tau.serving import plan
from tau.serving.request import DeployRequest, check

RAY_IMAGE = "rayproject/ray:2.40.0-py312-gpu"
VLLM_IMAGE = "vllm/vllm-openai@sha256:" + "b" * 64
CHECKPOINT = Checkpoint("/data/checkpoints/finetunes/policy-7/final", "blob-training")


def planned(profile: str, checkpoint: Checkpoint | None = None, **flags) -> ServeIntent:
    request = DeployRequest(namespace=NAMESPACE, profile=profile, **flags)
    check(request)
    return plan.build(request, plan.parse(request), selection(profile), "jobqueue", checkpoint)


def rayservice_single() -> ServeIntent:
    return planned(
        GPU,
        CHECKPOINT,
        name="policy",
        image=RAY_IMAGE,
        import_path="serve:app",
        replicas=2,
        env=("LOG_LEVEL=info",),
        env_secret=("HF_TOKEN=hf-credentials:token",),
        runtime_pip=("numpy==2.1.3",),
        shm_size="8Gi",
    )


def rayservice_multi_node() -> ServeIntent:
    return planned(
        MULTI,
        CHECKPOINT,
        name="llm-2x8",
        image=RAY_IMAGE,
        nodes=2,
        env=("TAU_SERVE_NODES=2",),
        shm_size="64Gi",
        memory="512Gi",
    )


def rayservice_autoscaling() -> ServeIntent:
    return planned(
        CPU,
        name="ranker",
        image=RAY_IMAGE,
        import_path="ranker.app:build",
        max_replicas=4,
        min_replicas=0,
        scale_down_delay=120,
        port=9000,
    )


def deployment_service_probes() -> ServeIntent:
    return planned(
        GPU,
        CHECKPOINT,
        name="vllm",
        kind="deployment",
        image=VLLM_IMAGE,
        command=("python3", "-m", "vllm.entrypoints.openai.api_server"),
        arg=("--model", "/data/checkpoints/finetunes/policy-7/final"),
        deployment_ports=("8000",),
        service_port=80,
        readiness_path="/health",
        startup_path="/health",
        liveness_path="/health",
        startup_failure_threshold=60,
        volume=("cache=emptyDir", "config=configMap:vllm-config"),
        mount=("cache:/root/.cache", "config:/etc/vllm:ro"),
        init=("warm=busybox:1.36.1",),
        sidecar=("metrics=ghcr.io/example/exporter:1.0",),
        shm_size="16Gi",
        cpu="8",
        memory="64Gi",
        env_secret=("HF_TOKEN=hf-credentials:token",),
    )


def deployment_hpa() -> ServeIntent:
    return planned(
        CPU,
        name="echo",
        kind="deployment",
        image="ghcr.io/example/echo:1.2.3",
        deployment_ports=("8080",),
        service_port=80,
        service_target_port=8080,
        max_replicas=5,
        min_replicas=2,
        target_qps=50,
        cpu="500m",
    )


FIXTURES = {
    "rayservice-single": rayservice_single,
    "rayservice-multi-node": rayservice_multi_node,
    "rayservice-autoscaling": rayservice_autoscaling,
    "deployment-service-probes": deployment_service_probes,
    "deployment-hpa": deployment_hpa,
}


def replace(intent: ServeIntent, **changes) -> ServeIntent:
    return dataclasses.replace(intent, **changes)
