"""Layered resolution: every value has one source, and disagreeing layers are errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from tau import keys
from tau.errors import UsageError, ValidationError
from tau.resolve.direct import DEFAULT_RUNTIME_IMAGE, resolve_run
from tau.resolve.layers import (
    PLACEHOLDER_NAMESPACE,
    PLACEHOLDER_QUEUE,
    ConfigLayer,
    DescriptorLayer,
    Overrides,
    ProfileLayer,
    WorkspaceLayer,
)
from tau.resolve.profile import snapshot_profile
from tau.resolve.provenance import Layer
from tau.runconfig import load

JOB = """\
name: train
engine: job
entrypoint: train.py
runtime:
  image: python:3.12-slim
compute:
  gpus: 0
storage:
  data_pvc: training-data
"""

WORKSPACE = WorkspaceLayer(
    name="research",
    namespace="research-ns",
    queue="research-queue",
    priority_tier="normal",
    output_root="/data/projects/research",
    service_account="research-runner",
    workload_identity=True,
    retention_seconds=7200,
    workspace_id="ws-1",
)


def config(tmp_path: Path, text: str = JOB, name: str = "tau.yaml") -> ConfigLayer:
    (tmp_path / "train.py").write_text("print('hi')\n")
    path = tmp_path / name
    path.write_text(text)
    return ConfigLayer(load(path))


def resolve(layer: ConfigLayer, **kwargs):
    kwargs.setdefault("new_id", lambda: "0" * 24)
    return resolve_run(layer, **kwargs)


def source(resolution, name):
    return resolution.provenance.source_of(name)


def test_values_from_the_file_carry_file_and_line(tmp_path):
    result = resolve(config(tmp_path), overrides=Overrides(dry_run="client"))
    assert str(source(result, "name")).endswith("tau.yaml:1:1")
    assert str(source(result, "image")).endswith("tau.yaml:5:3")
    assert str(source(result, "data PVC (/data)")).endswith("tau.yaml:9:3")
    assert source(result, "ttl_seconds_after_finished").layer is Layer.DEFAULT
    assert result.intent.ttl_seconds_after_finished == 28800
    assert result.intent.output == "/data/checkpoints/workflows/train"
    assert source(result, "storage.output").layer is Layer.DEFAULT
    assert result.intent.script.content == b"print('hi')\n"


def test_workspace_defaults_fill_namespace_queue_identity_retention_and_output(tmp_path):
    result = resolve(config(tmp_path), workspace=WORKSPACE)
    intent = result.intent
    assert intent.namespace == "research-ns"
    assert intent.placement.queue == "research-queue"
    assert intent.service_account == "research-runner"
    assert intent.workload_identity is True
    assert intent.ttl_seconds_after_finished == 7200
    assert intent.output == "/data/projects/research/train"
    # The workspace priority tier "normal" means the default classes.
    assert intent.placement.workload_priority_class == "taugrid-default"
    for name in ("namespace", "queue", "service_account", "storage.output"):
        assert source(result, name).layer is Layer.WORKSPACE, name
    assert result.placeholders == []


def test_file_ttl_wins_over_workspace_retention(tmp_path):
    text = JOB + "run:\n  ttl_seconds_after_finished: 3600\n"
    result = resolve(config(tmp_path, text), workspace=WORKSPACE)
    assert result.intent.ttl_seconds_after_finished == 3600
    assert source(result, "ttl_seconds_after_finished").layer is Layer.FILE


def test_namespace_that_disagrees_with_the_workspace_is_an_error(tmp_path):
    text = JOB + "policy:\n  namespace: elsewhere\n"
    with pytest.raises(ValidationError, match="conflicts with TauWorkspace 'research'"):
        resolve(config(tmp_path, text), workspace=WORKSPACE)
    with pytest.raises(ValidationError, match="conflicts with TauWorkspace"):
        resolve(config(tmp_path), workspace=WORKSPACE, overrides=Overrides(namespace="other"))


def test_queue_that_disagrees_with_the_workspace_is_ambiguous(tmp_path):
    text = JOB + "policy:\n  queue: mine\n"
    with pytest.raises(ValidationError, match="LocalQueue is ambiguous"):
        resolve(config(tmp_path, text), workspace=WORKSPACE)


def test_workspace_names_from_different_layers_must_agree(tmp_path):
    descriptor = DescriptorLayer("tau/workspace.connection.yaml", "research", "aks-ctx")
    with pytest.raises(ValidationError, match="workspace is ambiguous"):
        resolve(config(tmp_path), descriptor=descriptor, overrides=Overrides(workspace="other"))
    result = resolve(
        config(tmp_path), descriptor=descriptor, workspace=WORKSPACE, overrides=Overrides()
    )
    assert result.intent.workspace == "research"
    assert source(result, "workspace").layer is Layer.DESCRIPTOR
    assert result.context == "aks-ctx"
    flagged = resolve(
        config(tmp_path),
        descriptor=descriptor,
        workspace=WORKSPACE,
        overrides=Overrides(context="other-ctx"),
    )
    assert flagged.context == "other-ctx"
    assert source(flagged, "context").layer is Layer.FLAG


def test_cli_flags_are_the_top_layer_when_no_workspace_constrains_them(tmp_path):
    result = resolve(
        config(tmp_path),
        overrides=Overrides(
            namespace="team-a", service_account="sa", run_name="renamed", dry_run="client"
        ),
    )
    assert result.intent.namespace == "team-a"
    assert result.intent.name == "renamed"
    assert source(result, "namespace").layer is Layer.FLAG
    assert source(result, "service_account").layer is Layer.FLAG


def test_client_dry_run_renders_placeholders_and_warns(tmp_path):
    result = resolve(config(tmp_path), overrides=Overrides(dry_run="client"))
    assert result.intent.namespace == PLACEHOLDER_NAMESPACE
    assert result.intent.placement.queue == PLACEHOLDER_QUEUE
    assert result.placeholders == ["namespace", "queue"]
    assert "could not resolve namespace, queue" in result.warnings[0]
    assert source(result, "queue").layer is Layer.UNRESOLVED
    assert "placeholder" in result.notes[0]


def test_unresolved_values_are_errors_outside_client_dry_run(tmp_path):
    with pytest.raises(ValidationError, match="namespace is unresolved"):
        resolve(config(tmp_path), overrides=Overrides(dry_run="server"))


def test_job_without_gpu_cardinality_is_refused(tmp_path):
    text = JOB.replace("  gpus: 0\n", "  cpu_request: '1'\n")
    with pytest.raises(ValidationError, match="no resolved GPU cardinality"):
        resolve(config(tmp_path, text), workspace=WORKSPACE)
    shaped = text + "policy:\n  shape: 8xa100-80gb\n"
    result = resolve(config(tmp_path, shaped), workspace=WORKSPACE)
    assert result.intent.gpus == 8


PROFILE = ProfileLayer(
    name="research.training.8x",
    origin="TauCluster cluster",
    gpus_per_worker=8,
    worker_count=1,
    placement="single-node-nvlink",
    queue="research-queue",
    workload_priority_class="taugrid-priority",
    pod_priority_class="taugrid-priority",
    cluster_generation=4,
    profile_set_hash="f" * 64,
    topology_aware=True,
)


def test_profile_supplies_gpus_priorities_topology_and_stamps(tmp_path):
    text = JOB.replace("  gpus: 0\n", "  cpu_request: '1'\n")
    result = resolve(config(tmp_path, text), workspace=WORKSPACE, profile=PROFILE)
    intent = result.intent
    assert intent.gpus == 8
    assert intent.placement.workload_priority_class == "taugrid-priority"
    assert intent.placement.topology_annotations == (
        (keys.KUEUE_PODSET_REQUIRED_TOPOLOGY, keys.HOSTNAME_LABEL),
    )
    assert intent.placement.profile == "research.training.8x"
    assert intent.placement.cluster_generation == 4
    assert source(result, "compute.gpus").layer is Layer.PROFILE


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("compute:\n  gpus: 4\n", "compute.gpus=4 conflicts with authoritative workload profile"),
        ("policy:\n  priority_tier: priority\n", "policy.priority_tier cannot be combined"),
        ("policy:\n  queue: other\n", "LocalQueue is ambiguous"),
    ],
)
def test_config_cannot_contradict_an_authoritative_profile(tmp_path, extra, message):
    text = JOB.replace("compute:\n  gpus: 0\n", "") + extra
    with pytest.raises(ValidationError, match=message):
        resolve(config(tmp_path, text), workspace=WORKSPACE, profile=PROFILE)


GPU_PROFILE = dataclasses.replace(
    PROFILE, flavor_gpu_classes=(("gpu-a100", "a100-80gb"), ("gpu-plain", ""))
)


def test_a_gpu_class_a_profile_flavor_serves_narrows_the_profile_s_nodes(tmp_path):
    text = JOB.replace("compute:\n  gpus: 0\n", "") + "policy:\n  gpu_class: a100-80gb\n"
    result = resolve(config(tmp_path, text), workspace=WORKSPACE, profile=GPU_PROFILE)
    assert result.intent.placement.gpu_class == "a100-80gb"
    assert result.intent.placement.profile == "research.training.8x"
    legacy = text.replace("a100-80gb", "a100-nvlink-80gb")
    assert resolve(config(tmp_path, legacy), workspace=WORKSPACE, profile=GPU_PROFILE)


def test_a_gpu_class_no_profile_flavor_serves_names_the_flavors_and_the_class(tmp_path):
    text = JOB.replace("compute:\n  gpus: 0\n", "") + "policy:\n  gpu_class: h200-141gb\n"
    with pytest.raises(ValidationError) as raised:
        resolve(config(tmp_path, text), workspace=WORKSPACE, profile=GPU_PROFILE)
    line = raised.value.one_line()
    assert "policy.gpu_class='h200-141gb' is not served by workload profile" in line
    assert "flavors: gpu-a100=a100-80gb, gpu-plain=<no gpu class>" in line
    assert "ResourceFlavor labelled tau.azure.com/gpu-class=h200-141gb" in line


def test_a_gpu_class_is_refused_when_the_profile_publishes_no_flavor_classes(tmp_path):
    text = JOB.replace("compute:\n  gpus: 0\n", "") + "policy:\n  gpu_class: a100-80gb\n"
    older = dataclasses.replace(PROFILE, flavor_gpu_classes=None)
    with pytest.raises(ValidationError, match="publishes no GPU class per ResourceFlavor"):
        resolve(config(tmp_path, text), workspace=WORKSPACE, profile=older)
    anything = text.replace("a100-80gb", "any")
    assert resolve(config(tmp_path, anything), workspace=WORKSPACE, profile=older)


def test_rayjob_counts_default_and_ray_image_default(tmp_path):
    text = "name: tune\nengine: rayjob\nentrypoint: train.py\ncompute:\n  workers: 2\n"
    result = resolve(config(tmp_path, text), workspace=WORKSPACE)
    intent = result.intent
    assert (intent.workers, intent.gpus_per_worker) == (2, 1)
    assert source(result, "compute.gpus_per_worker").layer is Layer.DEFAULT
    assert intent.image.endswith("ray:py3.12-ray2.56.0-cuda13.0")
    assert source(result, "image").layer is Layer.DEFAULT


def test_platform_env_overrides_the_offload_image(tmp_path):
    text = (
        JOB
        + "metrics:\n  history: [metrics.jsonl]\n  offload:\n    enabled: true\n"
        + "    image: registry.example.com/offload:1.0\n"
        + "experiment:\n  project: vision\n  name: exp\n"
    )
    env = {keys.ENV_METRICS_OFFLOAD_IMAGE: "registry.example.com/offload:2.0"}
    result = resolve(config(tmp_path, text), workspace=WORKSPACE, env=env)
    assert result.intent.metrics_offload.image == "registry.example.com/offload:2.0"
    assert source(result, "metrics.offload.image").layer is Layer.ENV
    plain = resolve(config(tmp_path, text), workspace=WORKSPACE)
    assert plain.intent.metrics_offload.image == "registry.example.com/offload:1.0"


OFFLOAD = (
    "metrics:\n  history: [metrics-history-attempt-0/*.jsonl, /data/shared/extra.jsonl]\n"
    "  offload:\n    enabled: true\n"
    "experiment:\n  project: vision\n  name: exp\n"
)


def test_the_offload_image_falls_back_to_this_projects_runtime_image(tmp_path):
    result = resolve(config(tmp_path, JOB + OFFLOAD), workspace=WORKSPACE)
    assert result.intent.metrics_offload.image == DEFAULT_RUNTIME_IMAGE
    assert source(result, "metrics.offload.image").layer is Layer.DEFAULT


def test_relative_history_globs_resolve_under_the_output_directory(tmp_path):
    result = resolve(config(tmp_path, JOB + OFFLOAD), workspace=WORKSPACE)
    output = result.intent.output
    assert output.startswith("/data/")
    assert result.intent.metrics_offload.history == (
        f"{output}/metrics-history-attempt-0/*.jsonl",
        "/data/shared/extra.jsonl",
    )


def test_a_remote_write_endpoint_is_refused_rather_than_ignored(tmp_path):
    env = {keys.ENV_METRICS_OFFLOAD_REMOTE_WRITE_ENDPOINT: "https://prometheus.example/write"}
    with pytest.raises(ValidationError, match="remote write is not supported"):
        resolve(config(tmp_path, JOB + OFFLOAD), workspace=WORKSPACE, env=env)


def test_env_secret_is_recorded_without_its_reference(tmp_path):
    text = JOB.replace(
        "  image: python:3.12-slim\n",
        "  image: python:3.12-slim\n  env_secret:\n    HF_TOKEN: hf-credentials:token\n",
    )
    result = resolve(config(tmp_path, text), workspace=WORKSPACE)
    assert result.intent.env_secret[0][1].secret == "hf-credentials"
    assert "hf-credentials" not in str(result.provenance.rows())


def snapshot_file(tmp_path: Path) -> None:
    from tau.profiles.normalize import profile_set_hash
    from tau.profiles.select import ProfileSet
    from tau.profiles.snapshot import snapshot_from, write_snapshot
    from tests.unit.controller.world import profile as workload_profile

    profile = workload_profile(
        applicability={"teams": ["research"], "lanes": ["training"], "namespaces": ["research-ns"]},
        conditions=[
            {
                "type": keys.COND_READY,
                "status": "True",
                "observedGeneration": 2,
                "reason": "Resolved",
                "message": "",
            }
        ],
    )
    profiles = (profile,)
    profile_set = ProfileSet(2, profile_set_hash(list(profiles)), profiles, "test")
    write_snapshot(snapshot_from(profile_set), tmp_path / "profiles.snapshot.yaml")


SNAPSHOT_JOB = JOB.replace("compute:\n  gpus: 0\n", "") + (
    "policy:\n  workload_profile_snapshot: profiles.snapshot.yaml\n  namespace: research-ns\n"
    "  team: research\n  lane: training\n"
)


def test_snapshot_selects_the_profile_offline_for_client_dry_run(tmp_path):
    snapshot_file(tmp_path)
    layer = config(tmp_path, SNAPSHOT_JOB)
    profile = snapshot_profile(layer.loaded)
    assert profile.name == "research.training.1x"
    result = resolve(layer, profile=profile, overrides=Overrides(dry_run="client"))
    intent = result.intent
    assert intent.gpus == 1
    assert intent.placement.queue == "jobqueue"
    assert intent.namespace == "research-ns"
    assert intent.placement.cluster_generation == 2
    assert "snapshot" in str(source(result, "queue"))


def test_snapshot_cannot_authorize_server_dry_run_or_apply(tmp_path):
    snapshot_file(tmp_path)
    layer = config(tmp_path, SNAPSHOT_JOB)
    profile = snapshot_profile(layer.loaded)
    with pytest.raises(UsageError, match="requires --dry-run=client"):
        resolve(layer, profile=profile, overrides=Overrides(dry_run="server"))


def test_snapshot_is_scoped_to_the_configured_team(tmp_path):
    snapshot_file(tmp_path)
    text = SNAPSHOT_JOB.replace("team: research", "team: vision")
    with pytest.raises(ValidationError, match="no ready workload profile"):
        snapshot_profile(config(tmp_path, text).loaded)


def test_snapshot_file_is_plain_yaml(tmp_path):
    snapshot_file(tmp_path)
    data = yaml.safe_load((tmp_path / "profiles.snapshot.yaml").read_text())
    assert data["kind"] == "TauWorkloadProfileSnapshot"


def test_behaviour_switches_from_the_file_are_listed_with_their_line(tmp_path):
    text = (
        JOB.replace(
            "  image: python:3.12-slim\n",
            "  image: python:3.12-slim\n  security:\n    mode: restricted\n",
        )
        + "  publish: staged\n"
    )
    result = resolve(config(tmp_path, text), workspace=WORKSPACE)
    assert str(source(result, "runtime.security.mode")).endswith("tau.yaml:7:5")
    assert result.provenance.value_of("storage.publish") == "staged"
    assert result.intent.restricted and result.intent.staged_publish


@pytest.mark.parametrize("spelling", ["single-node-nvlink", "same-host"])
def test_either_spelling_of_the_profile_placement_agrees_with_it(tmp_path, spelling):
    text = JOB.replace("compute:\n  gpus: 0\n", "") + f"policy:\n  topology: {spelling}\n"
    result = resolve(config(tmp_path, text), workspace=WORKSPACE, profile=PROFILE)
    assert result.intent.placement.profile == "research.training.8x"


def test_another_placement_than_the_profile_s_is_a_conflict(tmp_path):
    text = JOB.replace("compute:\n  gpus: 0\n", "") + "policy:\n  topology: multi-node-nccl\n"
    with pytest.raises(ValidationError, match=r"policy\.topology=.multi-node-nccl. conflicts"):
        resolve(config(tmp_path, text), workspace=WORKSPACE, profile=PROFILE)


def test_a_workspace_enforcing_restricted_pod_security_gets_restricted_pods(tmp_path):
    """Its namespace would refuse any other pod; the source says why the mode is on."""
    from dataclasses import replace

    restricted = replace(WORKSPACE, pod_security="restricted")
    result = resolve(config(tmp_path), workspace=restricted)
    assert result.intent.restricted
    assert source(result, "runtime.security.mode").layer is Layer.WORKSPACE
    assert "Pod Security restricted" in str(source(result, "runtime.security.mode"))
    for level in ("baseline", None):
        elsewhere = resolve(config(tmp_path), workspace=replace(WORKSPACE, pod_security=level))
        assert not elsewhere.intent.restricted


def test_the_profile_layer_pairs_every_flavor_with_its_published_gpu_class():
    from tau.profiles.select import Selection
    from tau.resolve.profile import profile_layer

    def layer(**published):
        record = {"name": "p", "resourceFlavors": ["cpu", "gpu-a100"], **published}
        return profile_layer(Selection(record, 1, "f" * 64, "TauCluster cluster"))

    served = layer(flavorGpuClasses={"gpu-a100": "a100-80gb"})
    assert served.flavor_gpu_classes == (("cpu", ""), ("gpu-a100", "a100-80gb"))
    assert layer().flavor_gpu_classes is None, "an older controller publishes none"
