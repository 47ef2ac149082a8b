"""Defaults a researcher relies on when a field is left out (reference §2)."""

from __future__ import annotations

from tau.runconfig.rules import job_gpu_count


def test_empty_file_is_an_empty_valid_config(loads) -> None:
    config = loads("").config
    assert config.run_name is None
    assert config.engine_value == "job"
    assert config.launcher_value == "python"


def test_compute_and_execution_defaults(loads) -> None:
    config = loads("name: t\n").config
    assert config.compute is None and config.execution is None
    loaded = loads("name: t\ncompute: {}\nexecution: {}\n").config
    assert loaded.compute.workers == 1
    assert loaded.compute.gpus is None
    assert loaded.compute.gpus_per_worker is None  # documented default 1, unset stays visible
    assert loaded.execution.processes_per_node == 1
    assert loaded.execution.nodes == 1
    assert loaded.execution.allow_nccl_override is False


def test_rayjob_launcher_defaults_to_ray_train(loads) -> None:
    assert loads("engine: rayjob\n").config.launcher_value == "ray-train"


def test_ttl_defaults_to_eight_hours(loads) -> None:
    assert loads("name: t\n").config.ttl_seconds() == 28800
    assert loads("name: t\nrun: {ttl_seconds_after_finished: 3600}\n").config.ttl_seconds() == 3600


def test_resilience_defaults(loads) -> None:
    disabled = loads("name: train\n").config
    assert disabled.retry_on() == []
    config = loads("name: train\nresilience: {max_retries: 2}\n").config
    assert config.resilience.max_retries == 2
    assert config.retry_on() == ["Preempted", "Evicted"]
    assert config.checkpoint_path() == "/data/checkpoints/finetunes/train"
    assert config.resilience.backoff_initial is None  # rendered as the documented 30s
    assert config.resilience.backoff_max is None  # rendered as the documented 5m


def test_retry_on_is_case_insensitive_and_canonicalised(loads) -> None:
    config = loads("resilience: {max_retries: 1, retry_on: [oomkilled, PREEMPTED]}\n").config
    assert config.retry_on() == ["OOMKilled", "Preempted"]


def test_explicit_checkpoint_path_wins(loads) -> None:
    config = loads("name: t\nresilience: {checkpoint_path: /data/ckpt/t}\n").config
    assert config.checkpoint_path() == "/data/ckpt/t"


def test_policy_storage_metrics_defaults(loads) -> None:
    config = loads("policy: {}\nstorage: {}\nmetrics: {offload: {}}\n").config
    assert config.policy.clear_node_selector is False
    assert config.policy.disable_default_priorities is False
    assert config.storage.publish is None
    assert config.metrics.offload.enabled is False


def test_null_means_unset(loads) -> None:
    config = loads("name: t\nruntime:\ncompute:\n  workers: ~\n").config
    assert config.runtime is None
    assert config.compute.workers == 1


def test_job_gpu_count_comes_from_gpus_else_shape(loads) -> None:
    assert job_gpu_count(loads("compute: {gpus: 2}\n").config) == 2
    assert job_gpu_count(loads("policy: {shape: 8xa100-80gb}\n").config) == 8
    assert job_gpu_count(loads("policy: {shape: a100}\n").config) is None
