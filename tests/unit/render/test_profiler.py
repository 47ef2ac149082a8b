"""`profiler.*` renders a bounded, rank-scoped nsys/ncu capture of a Job's entrypoint.

What a researcher relies on: the Job says what is profiled and where the reports go (the
annotations and `TAU_PROFILE_*` env of the reference contract), the entrypoint runs under the
profiler stage of the wrapper, innermost, and a config the profiler cannot honour is refused
before anything is rendered.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tau import keys
from tau.render import RenderError, render, wrapper
from tau.render.intent import Mount, Profiler, PvcVolume
from tau.resolve.direct import resolve_run
from tau.resolve.layers import ConfigLayer, Overrides
from tau.resolve.provenance import Layer
from tau.runconfig import ConfigError, load

from . import intents
from .schema import validate_rendered

CONFIG = """\
name: train
engine: job
entrypoint: train.py
runtime:
  image: python:3.12-slim
{runtime}compute:
  gpus: 1
policy:
  queue: research-queue
storage:
  data_pvc: training-data
{storage}profiler:
{profiler}
"""
OUT = "/data/checkpoints/workflows/train/profile"


def resolved(tmp_path: Path, profiler: str, extra: str = "", *, runtime="", storage=""):
    """`extra` is appended as top-level YAML; `runtime`/`storage` go into those blocks."""
    (tmp_path / "train.py").write_text("print('step')\n")
    text = CONFIG.format(profiler=profiler, runtime=runtime, storage=storage) + extra
    (tmp_path / "tau.yaml").write_text(text)
    layer = ConfigLayer(load(tmp_path / "tau.yaml"))
    return resolve_run(layer, overrides=Overrides(namespace="research", dry_run="client"))


def rendered_job(tmp_path: Path, profiler: str, extra: str = "", **blocks: str):
    objects = render(resolved(tmp_path, profiler, extra, **blocks).intent)
    validate_rendered(objects)
    return objects[-1]


def main_container(job):
    return job["spec"]["template"]["spec"]["containers"][0]


def env_of(job) -> dict[str, str]:
    return {e["name"]: e["value"] for e in main_container(job)["env"] if "value" in e}


def profile_annotations(job) -> dict[str, str]:
    return {
        key: value
        for key, value in job["metadata"]["annotations"].items()
        if key.startswith(keys.DOMAIN + "profile-")
    }


def test_nsys_on_rank_0_stamps_what_is_captured_and_where_the_report_lands(tmp_path):
    job = rendered_job(tmp_path, "  mode: nsys\n  warmup: 30s\n  duration: 90s")
    assert profile_annotations(job) == {
        keys.PROFILER_MODE: "nsys",
        keys.PROFILER_PATH: OUT,
        keys.PROFILER_PVC: "training-data",
        keys.PROFILER_RANK: "0",
        keys.PROFILER_WORLD_SIZE: "1",
        keys.PROFILER_WARMUP: "30s",
        keys.PROFILER_DURATION: "1m30s",
    }
    env = env_of(job)
    assert {name: env[name] for name in env if name.startswith("TAU_PROFILE_")} == {
        keys.ENV_PROFILE_MODE: "nsys",
        keys.ENV_PROFILE_TOOL: "nsys",
        keys.ENV_PROFILE_RANK: "0",
        keys.ENV_PROFILE_OUT_DIR: OUT,
        keys.ENV_PROFILE_RUN_ID: "train",
        keys.ENV_PROFILE_NAMESPACE: "research",
        keys.ENV_PROFILE_EXT: "nsys-rep",
        keys.ENV_PROFILE_WARMUP_SEC: "30",
        keys.ENV_PROFILE_ACTIVE_SEC: "90",
        keys.ENV_PROFILE_OUT: f"{OUT}/rank-0.nsys-rep",
    }


def test_nsys_captures_two_minutes_by_default_and_says_where_that_came_from(tmp_path):
    resolution = resolved(tmp_path, "  mode: nsys")
    assert resolution.provenance.source_of("profiler.duration").layer is Layer.DEFAULT
    job = render(resolution.intent)[-1]
    assert profile_annotations(job)[keys.PROFILER_DURATION] == "2m0s"
    assert keys.PROFILER_WARMUP not in profile_annotations(job)
    assert env_of(job)[keys.ENV_PROFILE_ACTIVE_SEC] == "120"
    assert env_of(job)[keys.ENV_PROFILE_WARMUP_SEC] == "0"


def test_a_partial_second_rounds_the_capture_up_to_whole_seconds(tmp_path):
    job = rendered_job(tmp_path, "  mode: nsys\n  warmup: 1500ms\n  duration: 2.5s")
    assert profile_annotations(job)[keys.PROFILER_WARMUP] == "1.5s"
    assert profile_annotations(job)[keys.PROFILER_DURATION] == "2.5s"
    assert env_of(job)[keys.ENV_PROFILE_WARMUP_SEC] == "2"
    assert env_of(job)[keys.ENV_PROFILE_ACTIVE_SEC] == "3"


def test_ncu_has_no_capture_window_and_writes_an_ncu_report(tmp_path):
    job = rendered_job(tmp_path, "  mode: ncu")
    annotations = profile_annotations(job)
    assert annotations[keys.PROFILER_MODE] == "ncu"
    assert keys.PROFILER_DURATION not in annotations
    env = env_of(job)
    assert env[keys.ENV_PROFILE_EXT] == "ncu-rep"
    assert env[keys.ENV_PROFILE_ACTIVE_SEC] == "0"
    assert env[keys.ENV_PROFILE_OUT] == f"{OUT}/rank-0.ncu-rep"


def test_rank_all_gives_every_rank_its_own_report_through_a_pattern(tmp_path):
    job = rendered_job(tmp_path, "  mode: nsys\n  rank: all")
    env = env_of(job)
    assert env[keys.ENV_PROFILE_RANK] == "all"
    assert env[keys.ENV_PROFILE_OUT_PATTERN] == f"{OUT}/rank-<rank>.nsys-rep"
    assert keys.ENV_PROFILE_OUT not in env
    assert profile_annotations(job)[keys.PROFILER_RANK] == "all"


def test_a_rank_set_by_the_researchers_env_is_the_one_profiled(tmp_path):
    job = rendered_job(tmp_path, "  mode: nsys\n  rank: 2", runtime="  env:\n    RANK: '2'\n")
    assert env_of(job)[keys.ENV_PROFILE_OUT] == f"{OUT}/rank-2.nsys-rep"
    assert env_of(job)["RANK"] == "2"


def test_the_entrypoint_runs_inside_the_profiler_stage(tmp_path):
    job = rendered_job(tmp_path, "  mode: nsys")
    command = main_container(job)["command"]
    assert command[:4] == ["/bin/sh", "-c", wrapper.PROFILE_SCRIPT, "tau-profiler"]
    assert command[4:6] == ["bash", "-c"] and "python3 /tmp/tau-entrypoint.py" in command[6]


def test_staged_publication_wraps_the_profiler_stage_not_the_other_way_round(tmp_path):
    job = rendered_job(tmp_path, "  mode: nsys", storage="  publish: staged\n")
    command = main_container(job)["command"]
    assert command[:2] == ["/bin/sh", "-c"] and "tau_publish" in command[2]
    inner = command[command.index("tau-wrapper") + 1 :]
    assert inner[:4] == ["/bin/sh", "-c", wrapper.PROFILE_SCRIPT, "tau-profiler"]


def test_without_profiler_nothing_about_profiling_is_rendered(tmp_path):
    (tmp_path / "train.py").write_text("print('step')\n")
    text = CONFIG.split("{storage}profiler:")[0].format(runtime="")
    (tmp_path / "tau.yaml").write_text(text)
    layer = ConfigLayer(load(tmp_path / "tau.yaml"))
    job = render(resolve_run(layer, overrides=Overrides(namespace="research")).intent)[-1]
    assert not profile_annotations(job)
    assert not [name for name in env_of(job) if name.startswith("TAU_PROFILE_")]
    assert wrapper.PROFILE_SCRIPT not in main_container(job).get("command", [])


def test_output_outside_every_pvc_is_refused_by_the_renderer():
    intent = dataclasses.replace(
        intents.quickstart_job(),
        volumes=(PvcVolume("results", "results-pvc"),),
        mounts=(Mount("results", "/results"),),
        output="/scratch/train",
        profiler=Profiler("nsys"),
    )
    with pytest.raises(RenderError, match="profiler requires durable PVC output"):
        render(intent)


def test_output_on_a_read_only_mount_is_refused_by_the_renderer():
    intent = dataclasses.replace(
        intents.quickstart_job(),
        mounts=(Mount("data", "/data", read_only=True),),
        output="/data/train",
        profiler=Profiler("nsys"),
    )
    with pytest.raises(RenderError, match="not on a writable PVC mount"):
        render(intent)


def test_output_on_a_named_pvc_mount_records_that_claim():
    intent = dataclasses.replace(
        intents.quickstart_job(),
        volumes=(PvcVolume("data", "training-data"), PvcVolume("results", "results-pvc")),
        mounts=(Mount("data", "/data"), Mount("results", "/data/results")),
        output="/data/results/train",
        profiler=Profiler("ncu"),
    )
    annotations = render(intent)[-1]["metadata"]["annotations"]
    assert annotations[keys.PROFILER_PVC] == "results-pvc"
    assert annotations[keys.PROFILER_PATH] == "/data/results/train/profile"


def test_a_rayjob_intent_with_a_profiler_is_refused_not_rendered_unprofiled():
    intent = dataclasses.replace(intents.rayjob_2x8(), profiler=Profiler("nsys"))
    with pytest.raises(RenderError, match="profiler requires engine: job"):
        render(intent)


@pytest.mark.parametrize(
    ("profiler", "extra", "path", "message"),
    [
        ("  mode: nsys", "execution:\n  launcher: torchrun\n", "profiler", "torchrun"),
        ("  mode: nsys\n  rank: 1", "", "profiler.rank", "profiler.rank 1 never runs"),
        ("  mode: ncu\n  duration: 1m", "", "profiler.duration", "only to profiler.mode=nsys"),
        ("  mode: nsys\n  warmup: soon", "", "profiler.warmup", "is not a duration"),
    ],
)
def test_a_profiler_the_job_cannot_honour_is_refused_at_its_field(
    tmp_path, profiler, extra, path, message
):
    with pytest.raises(ConfigError) as caught:
        resolved(tmp_path, profiler, extra)
    assert [i for i in caught.value.issues if i.path == path and message in i.message], [
        str(i) for i in caught.value.issues
    ]
