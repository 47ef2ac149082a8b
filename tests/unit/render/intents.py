"""Resolved intents for the shapes TauGrid must render: the fixtures of the render suite."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from tau.render.intent import (
    Experiment,
    ImageAsset,
    MetricsOffload,
    Mount,
    Placement,
    Project,
    Provenance,
    PvcVolume,
    Resources,
    RunIntent,
    Script,
    SecretRef,
    SourceImage,
    Tune,
)

DIGEST = "sha256:" + "a" * 64
TRAIN_PY = b"import os\nprint('loss', 0.1, os.environ['TAU_OUTPUT_DIR'])\n"
PLACEMENT = Placement(
    queue="research-queue",
    workload_priority_class="taugrid-default",
    pod_priority_class="taugrid-default",
)
DATA = {
    "volumes": (PvcVolume("data", "training-data"),),
    "mounts": (Mount("data", "/data"),),
}


def base(**changes) -> RunIntent:
    intent = RunIntent(
        name="quickstart",
        namespace="research",
        engine="job",
        launcher="python",
        image="mcr.microsoft.com/azurelinux/base/python:3.12",
        placement=PLACEMENT,
        provenance=Provenance(
            config_hash="c0ffee" * 10 + "beef",
            code_sha="0123456789abcdef0123456789abcdef01234567",
            tau_command=("tau", "run", "--dry-run=client"),
        ),
        script=Script("train.py", TRAIN_PY),
        resources=Resources("500m", "1Gi", "1", "2Gi"),
        workspace="research",
        **DATA,
    )
    return dataclasses.replace(intent, **changes)


def quickstart_job() -> RunIntent:
    return base(output="/data/checkpoints/workflows/quickstart", configs=(("epochs", 3),))


def torchrun_2x4() -> RunIntent:
    return base(
        name="ddp",
        launcher="torchrun",
        launcher_explicit=True,
        nodes=2,
        processes_per_node=4,
        gpus=4,
        image="nvcr.io/nvidia/pytorch:24.08-py3",
        placement=dataclasses.replace(
            PLACEMENT,
            gpu_class="a100-80gb",
            topology_annotations=(
                ("kueue.x-k8s.io/podset-required-topology", "tau.azure.com/network-domain"),
            ),
        ),
        output="/data/checkpoints/workflows/ddp",
        configs=(("lr", 0.001), ("compile", "")),
    )


def rayjob_2x8() -> RunIntent:
    return base(
        name="ray-train",
        engine="rayjob",
        launcher="ray-train",
        workers=2,
        gpus_per_worker=8,
        image="mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.56.0-cuda13.0",
        resources=Resources(),
        pip=("transformers==4.44.2",),
        configs=(("scaling_config", {"use_gpu": True}),),
        output="/data/checkpoints/workflows/ray-train",
        service_account="research-runner",
        workload_identity=True,
    )


def ray_tune() -> RunIntent:
    return base(
        name="tune-smoke",
        engine="rayjob",
        launcher="ray-tune",
        launcher_explicit=True,
        workers=1,
        gpus_per_worker=0,
        image="mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.54.0",
        resources=Resources(),
        configs=(("batch_size", [16, 32]), ("lr", [0.001, 0.01, 0.1])),
        tune=Tune(metric="loss", mode="min", num_samples=1, max_concurrent_trials=2),
    )


def everything_job() -> RunIntent:
    """One Job using every optional feature: assets, secrets, staging, offload, restricted."""
    return base(
        name="full",
        image="registry.example.com/research/train@" + DIGEST,
        env=(("LOG_LEVEL", "debug"), ("TAU_RESUME_FROM", "/data/checkpoints/finetunes/full")),
        env_secret=(("HF_TOKEN", SecretRef("hf-credentials", "token")),),
        output="/data/projects/vision/full",
        staged_publish=True,
        publication_id="0123456789abcdef01234567",
        checkpoint="model/final",
        image_assets=(
            ImageAsset(
                "reference-assets",
                "registry.example.com/assets@" + DIGEST,
                "/opt/source-assets",
                "/opt/reference",
            ),
        ),
        restricted=True,
        experiment=Experiment(
            project="vision", experiment_id="ModernBERT FineWeb Round 1", group="arm-a"
        ),
        metrics_offload=MetricsOffload(
            image="registry.example.com/tau/offload:1.2.0",
            session_id="feedfacefeedfacefeedface",
            history=("metrics.jsonl",),
            out="/data/projects/vision/full/.tau/metrics/feedfacefeedfacefeedface/offload",
        ),
    )


def source_job() -> RunIntent:
    return base(
        name="source-backed-job",
        script=None,
        source=SourceImage("registry.example.com/research/source@" + DIGEST, "/workspace"),
        source_entrypoint="experiments/train.py",
        ttl_seconds_after_finished=3600,
        volumes=(),
        mounts=(),
    )


def ray_stellar() -> RunIntent:
    """The docs' portal-ray-stellar RayJob: offload sidecar on the head, staged publishing."""
    output = "/data/projects/taugrid-default/runs/portal-ray-stellar"
    return base(
        name="portal-ray-stellar",
        namespace="taugrid-default",
        engine="rayjob",
        launcher="python",
        workers=1,
        gpus_per_worker=1,
        image="mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.56.0-cuda13.0",
        resources=Resources(),
        volumes=(PvcVolume("data", "blob-training"),),
        output=output,
        staged_publish=True,
        publication_id="feedfacefeedfacefeedface",
        workspace="taugrid-default",
        experiment=Experiment(
            project="portal-demo", experiment_id="ray-plus-stellar", group="default"
        ),
        provenance=Provenance(
            config_hash="c0ffee" * 10 + "beef",
            code_sha="0123456789abcdef0123456789abcdef01234567",
            tau_command=("tau", "run", "--config", "examples/portal-ray-stellar/tau.yaml"),
            submission_id="5ub5ub5ub5ub5ub5ub5ub5ub5ub5ub5u",
        ),
        metrics_offload=MetricsOffload(
            image="registry.example.com/taugrid-portal@" + DIGEST,
            session_id="0123456789abcdef01234567",
            history=(f"{output}/metrics-history-attempt-0/*.jsonl",),
            out="/var/run/tau/metrics-offload",
        ),
    )


def offload_job_without_native_sidecars() -> RunIntent:
    """Clusters before Kubernetes 1.29: the sidecar is a second container that exits itself."""
    intent = quickstart_job()
    return dataclasses.replace(
        intent,
        name="offload-legacy",
        experiment=Experiment(project="vision", experiment_id="baseline", group="arm-a"),
        env=(("TAU_RETRY_ATTEMPT", "1"),),
        metrics_offload=MetricsOffload(
            image="registry.example.com/taugrid-portal:0.1.0",
            session_id="0123456789abcdef01234567",
            history=("/data/checkpoints/workflows/quickstart/metrics.jsonl",),
            out="/var/run/tau/metrics-offload",
            native_sidecar=False,
        ),
    )


def _project(entry: str = "train.py") -> Project:
    """A two-file project packed the way `run.working_dir` packs it."""
    from tau.resolve.project import package

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "study"
        root.mkdir()
        (root / entry).write_text("from helpers import loss\nprint(loss(2))\n")
        (root / "helpers.py").write_text("def loss(x):\n    return 1 / x\n")
        return package(Path(tmp), "study", f"study/{entry}")


def rayjob_working_dir() -> RunIntent:
    """A RayJob whose entrypoint imports a sibling module shipped by run.working_dir."""
    return dataclasses.replace(
        rayjob_2x8(),
        name="ray-project",
        workers=1,
        gpus_per_worker=0,
        pip=(),
        configs=(),
        project=_project(),
    )


def job_working_dir() -> RunIntent:
    return base(name="job-project", output="/data/out/job-project", project=_project())


FIXTURES = {
    "quickstart-job": quickstart_job,
    "torchrun-2x4": torchrun_2x4,
    "rayjob-2x8": rayjob_2x8,
    "ray-tune": ray_tune,
    "everything-job": everything_job,
    "source-job": source_job,
    "ray-stellar": ray_stellar,
    "offload-job-legacy-sidecar": offload_job_without_native_sidecars,
    "rayjob-working-dir": rayjob_working_dir,
    "job-working-dir": job_working_dir,
}
