"""A direct batch/v1 Job is exactly what Kueue and the platform expect."""

from __future__ import annotations

import base64
import dataclasses
import hashlib

import pytest

from tau import keys
from tau.render import RenderError, redact_secrets, render
from tau.render.intent import Placement, SecretRef

from . import intents
from .intents import PLACEMENT, base, everything_job, quickstart_job, source_job
from .schema import validate_rendered


def job_of(intent):
    objects = render(intent)
    assert [o["kind"] for o in objects][-1] == "Job"
    return objects[-1]


def main_container(job):
    return next(c for c in job["spec"]["template"]["spec"]["containers"] if c["name"] == "main")


def env_map(container):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def test_job_is_suspended_for_kueue_with_no_in_cluster_retries():
    job = job_of(quickstart_job())
    assert job["apiVersion"] == "batch/v1"
    assert job["spec"]["suspend"] is True
    assert job["spec"]["backoffLimit"] == 0
    assert job["spec"]["ttlSecondsAfterFinished"] == 28800
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    validate_rendered(render(quickstart_job()))


def test_queue_and_priority_labels_and_pod_priority_class():
    job = job_of(quickstart_job())
    labels = job["metadata"]["labels"]
    assert labels[keys.KUEUE_QUEUE_NAME] == "research-queue"
    assert labels[keys.KUEUE_PRIORITY_CLASS] == "taugrid-default"
    assert labels[keys.MANAGED_BY] == "tau"
    assert labels[keys.WORKSPACE] == "research"
    assert labels[keys.RUN_ID] == "quickstart"
    assert labels[keys.WORKLOAD_KIND] == "job"
    assert job["spec"]["template"]["spec"]["priorityClassName"] == "taugrid-default"
    # Kueue keys stay on the owner; pods carry only correlation labels.
    assert keys.KUEUE_QUEUE_NAME not in job["spec"]["template"]["metadata"]["labels"]


def test_missing_local_queue_is_a_render_error():
    intent = base(placement=Placement(queue=""))
    with pytest.raises(RenderError, match="Kueue LocalQueue is required"):
        render(intent)


def test_cpu_job_has_no_gpu_fields():
    job = job_of(quickstart_job())
    pod = job["spec"]["template"]["spec"]
    assert "tolerations" not in pod
    assert "nodeSelector" not in pod
    assert keys.NVIDIA_GPU not in str(job)
    assert keys.GPU_COUNT not in job["metadata"]["annotations"]


def test_gpu_job_requests_equal_limits_and_tolerates_gpu_taints():
    intent = base(gpus=1, placement=dataclasses.replace(PLACEMENT, gpu_class="a100-80gb"))
    job = job_of(intent)
    pod = job["spec"]["template"]["spec"]
    resources = main_container(job)["resources"]
    assert resources["requests"][keys.NVIDIA_GPU] == "1"
    assert resources["limits"][keys.NVIDIA_GPU] == "1"
    assert str(job).count("'nvidia.com/gpu': '1'") == 2
    assert pod["tolerations"] == [
        {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    ]
    assert pod["nodeSelector"] == {keys.GPU_CLASS: "a100-80gb"}
    assert job["metadata"]["labels"][keys.GPU_CLASS] == "a100-80gb"


def test_gpu_class_any_labels_but_does_not_select_nodes():
    intent = base(gpus=1, placement=dataclasses.replace(PLACEMENT, gpu_class="any"))
    job = job_of(intent)
    assert job["metadata"]["labels"][keys.GPU_CLASS] == "any"
    assert "nodeSelector" not in job["spec"]["template"]["spec"]


def test_policy_node_selector_merges_and_conflicting_gpu_class_is_refused():
    placement = dataclasses.replace(
        PLACEMENT, gpu_class="h100-80gb", extra_node_selector=(("pool", "train"),)
    )
    job = job_of(base(gpus=8, placement=placement))
    assert job["spec"]["template"]["spec"]["nodeSelector"] == {
        keys.GPU_CLASS: "h100-80gb",
        "pool": "train",
    }
    bad = dataclasses.replace(placement, extra_node_selector=((keys.GPU_CLASS, "a100-80gb"),))
    with pytest.raises(RenderError, match=r"requires tau\.azure\.com/gpu-class"):
        render(base(gpus=8, placement=bad))


def test_clear_node_selector_drops_only_the_profile_selector():
    placement = dataclasses.replace(
        PLACEMENT,
        node_selector=(("agentpool", "gpu"),),
        extra_node_selector=(("pool", "mine"),),
        clear_node_selector=True,
    )
    job = job_of(base(placement=placement))
    assert job["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "mine"}


def test_entrypoint_travels_base64_in_env_and_configs_become_flags():
    job = job_of(quickstart_job())
    main = main_container(job)
    env = env_map(main)
    assert base64.b64decode(env[keys.ENV_SCRIPT_B64]).startswith(b"import os")
    assert env[keys.ENV_SCRIPT_SRC] == "train.py"
    assert main["command"][:2] == ["bash", "-c"]
    assert main["command"][2].endswith("exec python3 /tmp/tau-entrypoint.py --epochs=3")


def test_shell_entrypoint_needs_a_shebang():
    from tau.render.intent import Script

    ok = job_of(base(script=Script("run.sh", b"#!/bin/bash\necho hi\n")))
    assert "chmod +x /tmp/run.sh && exec /tmp/run.sh" in main_container(ok)["command"][2]
    with pytest.raises(RenderError, match="no shebang"):
        render(base(script=Script("run.sh", b"echo hi\n")))


def test_env_contract_when_data_pvc_is_mounted():
    job = job_of(quickstart_job())
    main = main_container(job)
    env = env_map(main)
    assert env[keys.ENV_DATA_DIR] == "/data"
    assert env[keys.ENV_HOT_DIR] == "/mnt"
    assert env[keys.ENV_DATASETS_DIR] == "/mnt/datasets"
    assert env[keys.ENV_CHECKPOINTS_DIR] == "/mnt/checkpoints"
    assert env[keys.ENV_DURABLE_DATASETS_DIR] == "/data/datasets"
    assert env[keys.ENV_DURABLE_CHECKPOINTS_DIR] == "/data/checkpoints"
    assert env[keys.ENV_OUTPUT_DIR] == "/data/checkpoints/workflows/quickstart"
    assert [e["name"] for e in main["env"]] == sorted(e["name"] for e in main["env"])
    volumes = job["spec"]["template"]["spec"]["volumes"]
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "training-data"}} in volumes
    assert {"name": "tau-hot", "emptyDir": {}} in volumes
    assert main["workingDir"] == "/data"
    annotations = job["metadata"]["annotations"]
    assert annotations[keys.RESULT_PVC] == "training-data"
    assert annotations[keys.RESULT_PATH] == "/data/checkpoints/workflows/quickstart"


def test_no_pvc_means_no_data_env_and_no_hot_dir():
    job = job_of(base(volumes=(), mounts=()))
    main = main_container(job)
    assert keys.ENV_DATA_DIR not in env_map(main)
    assert "volumes" not in job["spec"]["template"]["spec"]
    assert "workingDir" not in main


def test_user_env_cannot_override_tau_managed_names():
    with pytest.raises(RenderError, match="cannot be overridden"):
        render(base(env=((keys.ENV_SCRIPT_B64, "x"),)))


def test_env_secret_renders_secret_key_ref_and_dry_run_redacts_it():
    intent = base(env_secret=(("HF_TOKEN", SecretRef("hf-credentials", "token")),))
    job = job_of(intent)
    ref = env_map(main_container(job))["HF_TOKEN"]
    assert ref == {"secretKeyRef": {"name": "hf-credentials", "key": "token"}}
    redacted = redact_secrets(render(intent))
    text = str(redacted)
    assert "hf-credentials" not in text
    assert "'name': '<redacted>', 'key': '<redacted>'" in text


def test_literal_env_size_limits():
    with pytest.raises(RenderError, match="maximum is 65536 bytes"):
        render(base(env=(("BIG", "x" * 65537),)))
    many = tuple((f"V{i}", "x" * 60000) for i in range(3))
    with pytest.raises(RenderError, match="literal environment payload"):
        render(base(env=many))


def test_oversized_script_payload_is_refused():
    from tau.render.intent import Script

    with pytest.raises(RenderError, match="TAU_SCRIPT_B64"):
        render(base(script=Script("train.py", b"#" * 60000)))


def test_ttl_comes_from_the_intent():
    assert job_of(base(ttl_seconds_after_finished=3600))["spec"]["ttlSecondsAfterFinished"] == 3600


def test_image_assets_are_copied_by_pinned_init_containers_and_mounted_read_only():
    job = job_of(everything_job())
    pod = job["spec"]["template"]["spec"]
    init = next(c for c in pod["initContainers"] if c["name"] == "tau-asset-reference-assets")
    assert init["command"] == ["/bin/cp"]
    assert init["args"] == ["-a", "--", "/opt/source-assets/.", "/tau-asset/"]
    assert init["image"].endswith("@sha256:" + "a" * 64)
    assert {"name": "tau-asset-reference-assets", "emptyDir": {}} in pod["volumes"]
    mount = next(
        m for m in main_container(job)["volumeMounts"] if m["mountPath"] == "/opt/reference"
    )
    assert mount["readOnly"] is True
    assert "ConfigMap" not in str(render(everything_job()))


def test_run_source_stages_the_tree_and_runs_from_it():
    job = job_of(source_job())
    pod = job["spec"]["template"]["spec"]
    init = pod["initContainers"][0]
    assert init["name"] == "tau-source"
    assert init["command"] == ["/bin/sh"]
    assert 'chmod a+x "/tau-source/$2"' in init["args"][1]
    assert init["args"][2:] == ["tau-source", "/workspace", "experiments/train.py"]
    main = main_container(job)
    assert main["workingDir"] == "/tau/source"
    assert main["command"] == ["bash", "-c", "exec python3 /tau/source/experiments/train.py"]
    assert {"name": "tau-source", "mountPath": "/tau/source"} in main["volumeMounts"]
    assert keys.ENV_SCRIPT_B64 not in env_map(main)
    assert job["spec"]["ttlSecondsAfterFinished"] == 3600
    validate_rendered(render(source_job()))


def test_runtime_working_dir_is_passed_through():
    job = job_of(base(working_dir="/workspace/project"))
    assert main_container(job)["workingDir"] == "/workspace/project"


def test_staged_publish_env_and_annotations():
    job = job_of(everything_job())
    env = env_map(main_container(job))
    assert env[keys.ENV_OUTPUT_STAGING_DIR] == "/mnt/tau-output/full"
    assert env[keys.ENV_OUTPUT_DIR] == "/data/projects/vision/full"
    annotations = job["metadata"]["annotations"]
    assert annotations[keys.ARTIFACT_PUBLICATION] == "staged"
    assert annotations[keys.ARTIFACT_PUBLICATION_ID] == "0123456789abcdef01234567"
    assert annotations[keys.CHECKPOINT_ARTIFACT] == "model/final"


def test_retry_env_is_user_settable():
    env = env_map(main_container(job_of(everything_job())))
    assert env[keys.ENV_RESUME_FROM] == "/data/checkpoints/finetunes/full"


def flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def test_metrics_offload_is_a_native_sidecar_running_the_offloader():
    job = job_of(everything_job())
    pod = job["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["main"]
    sidecar = pod["initContainers"][-1]
    assert (sidecar["name"], sidecar["restartPolicy"]) == ("metrics-offload", "Always")
    assert sidecar["command"] == ["taugrid-portal", "experiment", "offload", "metrics"]
    args = sidecar["args"]
    assert "--watch" in args and "--baseline-existing-history" in args
    assert flag(args, "--run") == "full"
    assert flag(args, "--experiment") == "ModernBERT FineWeb Round 1"
    assert (flag(args, "--workspace"), flag(args, "--namespace")) == ("research", "research")
    assert flag(args, "--kind") == "Job"
    assert flag(args, "--done-file") == "/var/run/tau/metrics-done"
    assert flag(args, "--config-hash") == everything_job().provenance.config_hash
    assert env_map(sidecar)[keys.ENV_EXP_STORE] == "/data/.tau/expstore"
    assert {m["mountPath"] for m in sidecar["volumeMounts"]} == {"/data", "/var/run/tau"}
    assert pod["terminationGracePeriodSeconds"] > 600
    annotations = job["metadata"]["annotations"]
    assert annotations[keys.EXPERIMENT_SOURCE] == "stellar"
    assert annotations[keys.METRICS_SESSION_ID] == "feedfacefeedfacefeedface"
    pod_annotations = job["spec"]["template"]["metadata"]["annotations"]
    assert pod_annotations[keys.METRICS_SESSION_ID] == "feedfacefeedfacefeedface"
    assert pod_annotations[keys.STELLAR_EXPERIMENT_ID] == "ModernBERT FineWeb Round 1"
    validate_rendered(render(everything_job()))


def test_the_main_container_runs_under_the_handshake_wrapper():
    main = main_container(job_of(everything_job()))
    command = main["command"]
    assert command[:2] == ["/bin/sh", "-c"] and command[3] == "tau-wrapper"
    assert command[4:6] == ["bash", "-c"]  # the entrypoint command, unchanged, as "$@"
    env = env_map(main)
    assert env[keys.ENV_METRICS_READY_FILE] == "/var/run/tau/metrics-ready"
    assert env[keys.ENV_METRICS_COMPLETION_FILE] == "/var/run/tau/metrics-completion.json"
    assert '"$TAU_METRICS_READY_FILE"' in command[2]


def test_without_native_sidecars_the_offloader_is_a_second_container():
    job = job_of(intents.offload_job_without_native_sidecars())
    pod = job["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["main", "metrics-offload"]
    assert "restartPolicy" not in pod["containers"][1]
    assert flag(pod["containers"][1]["args"], "--attempt") == "1"


def test_metrics_offload_without_entrypoint_is_refused():
    with pytest.raises(RenderError, match=r"requires run\.entrypoint"):
        render(dataclasses.replace(everything_job(), script=None))


def test_provenance_annotations():
    intent = dataclasses.replace(
        everything_job(),
        provenance=dataclasses.replace(
            everything_job().provenance,
            tau_command=("tau", "run", "--env", "A=secret", "--api-key", "k"),
            submission_id="abcdefabcdefabcdefabcdef",
        ),
    )
    annotations = job_of(intent)["metadata"]["annotations"]
    assert annotations[keys.CONFIG_HASH] == intent.provenance.config_hash
    assert annotations[keys.CODE_SHA] == intent.provenance.code_sha
    assert annotations[keys.IMAGE] == intent.image
    assert annotations[keys.IMAGE_DIGEST] == "sha256:" + "a" * 64
    assert annotations[keys.SUBMISSION_ID] == "abcdefabcdefabcdefabcdef"
    assert annotations[keys.TAU_COMMAND] == "tau run --env 'A=<redacted>' --api-key '<redacted>'"
    assert annotations[keys.CAPTURE_VERSION] == "v1alpha1"
    assert keys.STELLAR_EXPERIMENT_TITLE_RETIRED not in annotations


def test_image_digest_only_for_digest_pinned_images():
    annotations = job_of(quickstart_job())["metadata"]["annotations"]
    assert keys.IMAGE_DIGEST not in annotations


def test_experiment_labels_are_label_safe():
    labels = job_of(everything_job())["metadata"]["labels"]
    assert labels[keys.STELLAR_EXPERIMENT] == "modernbert-fineweb-round-1"
    assert labels[keys.STELLAR_PROJECT] == "vision"
    assert labels[keys.STELLAR_GROUP] == "arm-a"


def test_workload_identity_label_needs_a_service_account():
    job = job_of(base(service_account="runner", workload_identity=True))
    assert job["spec"]["template"]["metadata"]["labels"][keys.AZURE_WORKLOAD_IDENTITY_USE] == "true"
    assert job["spec"]["template"]["spec"]["serviceAccountName"] == "runner"
    job = job_of(base(workload_identity=True))
    assert keys.AZURE_WORKLOAD_IDENTITY_USE not in str(job)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Train", "DNS-1123"),
        ("a" * 64, "too long"),
        ("bad_name", "DNS-1123"),
    ],
)
def test_run_name_rules(name, message):
    with pytest.raises(RenderError, match=message):
        render(base(name=name))


def test_namespace_must_be_a_dns_label():
    with pytest.raises(RenderError, match="namespace"):
        render(base(namespace="Research"))


def test_script_digest_tracks_script_content_not_config():
    from tau.render.intent import Script

    first = job_of(base())["metadata"]["annotations"]
    config_edit = job_of(base(env=(("X", "1"),)))["metadata"]["annotations"]
    script_edit = job_of(base(script=Script("train.py", b"print(2)\n")))["metadata"]["annotations"]
    digest = first[keys.SCRIPT_PAYLOAD_DIGEST]
    assert digest == hashlib.sha256(base().script.content).hexdigest()
    assert config_edit[keys.SCRIPT_PAYLOAD_DIGEST] == digest
    assert script_edit[keys.SCRIPT_PAYLOAD_DIGEST] != digest


def test_run_source_records_the_source_image_digest_instead():
    annotations = job_of(source_job())["metadata"]["annotations"]
    assert annotations[keys.SOURCE_PAYLOAD_DIGEST] == "sha256:" + "a" * 64
    assert keys.SCRIPT_PAYLOAD_DIGEST not in annotations


def test_accounting_labels_from_policy():
    placement = dataclasses.replace(
        PLACEMENT, team="research", lane="training", shape="8xa100-80gb", topology="same-host"
    )
    labels = job_of(base(placement=placement))["metadata"]["labels"]
    assert labels[keys.TEAM] == "research"
    assert labels[keys.LANE] == "training"
    assert labels[keys.SHAPE] == "8xa100-80gb"
    assert labels[keys.TOPOLOGY] == "same-host"


def test_run_working_dir_is_unpacked_beside_the_job_and_becomes_its_working_directory():
    job = job_of(intents.job_working_dir())
    pod = job["spec"]["template"]["spec"]
    (init,) = pod["initContainers"]
    assert init["name"] == "tau-project" and init["command"][:2] == ["python3", "-c"]
    main = main_container(job)
    assert main["workingDir"] == "/tau/project"
    assert main["command"] == ["bash", "-c", "exec python3 /tau/project/train.py"]
    assert keys.ENV_SCRIPT_B64 not in env_map(main)
    assert {"name": "tau-project", "mountPath": "/tau/project"} in main["volumeMounts"]
