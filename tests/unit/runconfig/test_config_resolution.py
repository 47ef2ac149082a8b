"""Aliases and precedence: one resolved value per concept (reference §2.1-§2.6)."""

from __future__ import annotations

import pytest


def test_nested_run_fields_win_over_top_level(loads) -> None:
    config = loads(
        """
        name: outer
        engine: job
        entrypoint: outer.py
        image: top:1
        run:
          name: inner
          entrypoint: inner.py
          image: run:1
        """
    ).config
    assert config.run_name == "inner"
    assert config.entrypoint_value == "inner.py"
    assert config.image_value == "run:1"


def test_runtime_image_has_the_highest_priority(loads) -> None:
    config = loads("image: top:1\nrun: {image: run:1}\nruntime: {image: rt:1}\n").config
    assert config.image_value == "rt:1"
    assert loads("image: top:1\n").config.image_value == "top:1"


def test_entrypoint_precedence_includes_script_aliases(loads) -> None:
    assert loads("script: s.py\n").config.entrypoint_value == "s.py"
    assert loads("script: s.py\nrun: {script: r.py}\n").config.entrypoint_value == "r.py"
    assert loads("entrypoint: e.py\nscript: s.py\n").config.entrypoint_value == "e.py"


@pytest.mark.parametrize(
    ("text", "engine"),
    [
        ("compute: {workers: 2}\n", "rayjob"),
        ("compute: {gpus_per_worker: 1}\n", "rayjob"),
        ("compute: {gpus_per_worker: 0}\n", "rayjob"),
        ("runtime: {pip: [numpy]}\n", "rayjob"),
        ("compute: {gpus: 1}\n", "job"),
        ("run: {workload_kind: ray-train}\n", "rayjob"),
        ("workflow: {workload_kind: job}\nrun: {workload_kind: rayjob}\n", "job"),
        ("engine: ' JOB '\n", "job"),
    ],
)
def test_engine_inference(loads, text: str, engine: str) -> None:
    assert loads(text).config.engine_value == engine


def test_engine_ray_is_a_deprecated_alias_of_rayjob(loads) -> None:
    loaded = loads("engine: ray\n")
    assert loaded.config.engine == "rayjob"
    assert [w.path for w in loaded.warnings] == ["engine"]
    assert 'engine "ray" is deprecated; use "rayjob"' in loaded.warnings[0].message
    assert loaded.warnings[0].line == 1


def test_gpu_class_is_normalised_and_legacy_aliases_warn(loads) -> None:
    loaded = loads("policy:\n  gpu_class: A100_NVLINK 80GB\n")
    assert loaded.config.policy.gpu_class == "a100-80gb"
    assert loaded.warnings[0].path == "policy.gpu_class"
    assert "deprecated" in loaded.warnings[0].message
    assert loads("policy: {gpu_class: H100-80GB}\n").warnings == []


def test_the_docs_topology_values_are_current_and_never_warn(loads) -> None:
    for value in ("independent", "single-node-nvlink", "multi-node-nccl", "elastic-workers"):
        loaded = loads(f"policy: {{topology: {value}}}\n")
        assert loaded.config.policy.topology == value
        assert loaded.warnings == []


def test_profile_placement_spellings_are_accepted_as_written(loads) -> None:
    for value in ("unconstrained", "same-host", "same-network-domain", "same-site"):
        loaded = loads(f"policy: {{topology: {value}}}\n")
        assert loaded.config.policy.topology == value
        assert loaded.warnings == []


def test_experiment_title_is_deprecated_and_slugged(loads) -> None:
    loaded = loads("experiment: {title: 'ModernBERT FineWeb: Round 1'}\n")
    assert loaded.config.experiment_id == "modernbert-fineweb-round-1"
    assert [w.path for w in loaded.warnings] == ["experiment.title"]
    assert loads("experiment: {name: n, group: g}\n").config.experiment_id == "n"
    assert loads("experiment: {group: g}\n").config.experiment_id == "g"


def test_experiment_values_are_free_without_offload(loads) -> None:
    assert loads("experiment: {project: ModernBERT}\n").config.experiment.project == "ModernBERT"


def test_quantities_may_be_yaml_numbers(loads) -> None:
    compute = loads("compute: {cpu_request: 2, cpu_limit: 0.5, memory_request: 4Gi}\n").config
    assert compute.compute.cpu_request == "2"
    assert compute.compute.cpu_limit == "0.5"


def test_launcher_is_lower_cased(loads) -> None:
    assert loads("execution: {launcher: Python}\n").config.launcher_value == "python"


def test_queue_auto_passes_offline_validation(loads) -> None:
    assert loads("policy: {queue: auto}\n").config.policy.queue == "auto"


def test_allow_nccl_override_permits_nccl_env(loads) -> None:
    loaded = loads("runtime: {env: {NCCL_DEBUG: INFO}}\nexecution: {allow_nccl_override: true}\n")
    assert loaded.config.runtime.env == {"NCCL_DEBUG": "INFO"}


def test_settable_tau_keys_are_allowed(loads) -> None:
    env = "{TAU_RESUME_FROM: /c, TAU_RETRY_ATTEMPT: '1', TAU_RETRY_MAX: '2', TAU_RETRY_REASON: x}"
    assert len(loads(f"runtime: {{env: {env}}}\n").config.runtime.env) == 4


def test_torchrun_without_entrypoint_is_not_a_file_type_error(loads) -> None:
    loads("engine: job\nexecution: {launcher: torchrun}\n")


def test_shell_entrypoint_without_torchrun_is_fine(loads) -> None:
    loads("engine: job\nentrypoint: train.sh\n")


def test_ipv6_registry_digest_is_accepted_for_image_assets(loads) -> None:
    digest = "b" * 64
    loads(
        f"""
        engine: job
        storage:
          image_assets:
            - name: ref
              image: "[2001:db8::1]:5000/assets@sha256:{digest}"
              source_path: /opt/source-assets
              mount_path: /opt/reference
        """
    )


def test_metrics_offload_accepts_a_complete_config(loads) -> None:
    loaded = loads(
        """
        name: t
        engine: job
        entrypoint: train.py
        storage: {data_pvc: d}
        metrics:
          history: [metrics.jsonl, /data/shared/m.jsonl]
          offload:
            enabled: true
            image: registry.example.com/offload:1.2
            out: /var/run/tau/spool
        experiment: {project: p, name: e, group: g.1}
        """
    )
    assert loaded.config.metrics.offload.enabled is True


def test_a_multi_node_job_without_a_launcher_meets_by_torchrun(loads) -> None:
    loaded = loads("name: ddp\nengine: job\nexecution:\n  nodes: 2\n")
    assert loaded.config.launcher_value == "torchrun"
    assert loads("name: one\nengine: job\n").config.launcher_value == "python"
