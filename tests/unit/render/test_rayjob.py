"""RayJob: CPU-only head, one GPU worker group, Tau's distributed env contract."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json

import pytest

from tau import keys
from tau.render import RenderError, render
from tau.render.intent import Resources

from . import intents
from .intents import base, ray_tune, rayjob_2x8
from .schema import validate_rendered


def rayjob_of(intent):
    (obj,) = render(intent)
    assert obj["apiVersion"] == "ray.io/v1" and obj["kind"] == "RayJob"
    return obj


def head_and_worker(obj):
    cluster = obj["spec"]["rayClusterSpec"]
    (worker,) = cluster["workerGroupSpecs"]
    return cluster["headGroupSpec"], worker


def env_of(container):
    return {e["name"]: e.get("value") for e in container["env"]}


def test_rayjob_spec_lifecycle_and_queue():
    obj = rayjob_of(rayjob_2x8())
    spec = obj["spec"]
    assert spec["suspend"] is True
    assert spec["shutdownAfterJobFinishes"] is True
    assert spec["ttlSecondsAfterFinished"] == 15
    assert spec["submissionMode"] == "HTTPMode"
    assert obj["metadata"]["labels"][keys.KUEUE_QUEUE_NAME] == "research-queue"
    assert spec["rayClusterSpec"]["rayVersion"] == "2.56.0"
    validate_rendered([obj])


def test_head_is_cpu_only_on_the_system_pool():
    head, _ = head_and_worker(rayjob_of(rayjob_2x8()))
    assert head["rayStartParams"] == {"dashboard-host": "0.0.0.0", "num-cpus": "0", "num-gpus": "0"}
    pod = head["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms[0]["matchExpressions"][0] == {
        "key": "kubernetes.azure.com/mode",
        "operator": "In",
        "values": ["system"],
    }
    assert terms[1]["matchExpressions"][0]["operator"] == "DoesNotExist"
    assert keys.NVIDIA_GPU not in str(pod)
    ports = {p["name"]: p["containerPort"] for p in pod["containers"][0]["ports"]}
    assert ports == {"metrics": 8080, "gcs-server": 6379, "dashboard": 8265, "client": 10001}


def test_worker_group_replicas_and_gpus():
    _, worker = head_and_worker(rayjob_of(rayjob_2x8()))
    assert worker["groupName"] == "ray-train-w"
    assert worker["replicas"] == worker["minReplicas"] == worker["maxReplicas"] == 2
    assert worker["rayStartParams"] == {"num-gpus": "8"}
    container = worker["template"]["spec"]["containers"][0]
    assert container["resources"]["requests"][keys.NVIDIA_GPU] == "8"
    assert container["resources"]["limits"][keys.NVIDIA_GPU] == "8"
    assert container["resources"]["requests"]["cpu"] == "8"
    assert container["startupProbe"]["httpGet"] == {"path": "/api/healthz", "port": 52365}
    tolerations = worker["template"]["spec"]["tolerations"]
    assert {
        "key": "sku",
        "operator": "Equal",
        "value": "gpu",
        "effect": "NoSchedule",
    } in tolerations


def test_mig_workers_request_their_slice_instead_of_whole_gpus():
    intent = dataclasses.replace(rayjob_2x8(), gpu_resource="nvidia.com/mig-1g.10gb")
    obj = rayjob_of(intent)
    _, worker = head_and_worker(obj)
    resources = worker["template"]["spec"]["containers"][0]["resources"]
    assert resources["requests"]["nvidia.com/mig-1g.10gb"] == "8"
    assert keys.NVIDIA_GPU not in resources["requests"]
    assert keys.NVIDIA_GPU not in resources["limits"]
    validate_rendered([obj])


def test_distributed_env_contract():
    head, worker = head_and_worker(rayjob_of(rayjob_2x8()))
    for group in (head, worker):
        env = env_of(group["template"]["spec"]["containers"][0])
        assert env[keys.ENV_DIST_BACKEND] == "nccl"
        assert env[keys.ENV_NUM_WORKERS] == "2"
        assert env[keys.ENV_WORLD_SIZE] == "16"
        assert env[keys.ENV_DATA_DIR] == "/data"
        assert json.loads(env[keys.ENV_RAY_TRAIN_CONFIG_JSON]) == {
            "scaling_config": {"use_gpu": True}
        }


def test_cpu_rayjob_uses_gloo_and_worker_count():
    obj = rayjob_of(ray_tune())
    _, worker = head_and_worker(obj)
    env = env_of(worker["template"]["spec"]["containers"][0])
    assert env[keys.ENV_DIST_BACKEND] == "gloo"
    assert env[keys.ENV_WORLD_SIZE] == "1"
    assert "tolerations" not in worker["template"]["spec"]


def test_runtime_env_pip_and_service_account_on_both_groups():
    obj = rayjob_of(rayjob_2x8())
    assert obj["spec"]["runtimeEnvYAML"] == "pip:\n- transformers==4.44.2\n"
    assert str(obj).count("'serviceAccountName': 'research-runner'") == 2


def test_payload_digest_matches_the_shipped_envelope():
    obj = rayjob_of(rayjob_2x8())
    head, _ = head_and_worker(obj)
    init = head["template"]["spec"]["initContainers"][0]
    assert init["name"] == "tau-payload"
    env = env_of(init)
    raw = base64.b64decode(env[keys.ENV_PAYLOAD_B64])
    assert hashlib.sha256(raw).hexdigest() == obj["metadata"]["annotations"][keys.PAYLOAD_DIGEST]
    files = {f["name"]: base64.b64decode(f["data"]) for f in json.loads(raw)["files"]}
    assert files == {"train.py": rayjob_2x8().script.content}
    assert "python3 /script/train.py" in obj["spec"]["entrypoint"]
    assert "ConfigMap" not in str(obj)


def test_ray_tune_ships_the_driver_and_search_space():
    obj = rayjob_of(ray_tune())
    assert "python3 /script/_tau_tune_driver.py" in obj["spec"]["entrypoint"]
    head, worker = head_and_worker(obj)
    env = env_of(head["template"]["spec"]["containers"][0])
    assert env[keys.ENV_TUNE_METRIC] == "loss"
    assert env[keys.ENV_TUNE_MAX_CONCURRENT_TRIALS] == "2"
    assert json.loads(env[keys.ENV_TUNE_PARAM_SPACE]) == {
        "batch_size": [16, 32],
        "lr": [0.001, 0.01, 0.1],
    }
    assert env[keys.ENV_TUNE_TRAIN_PATH] == "/script/train.py"
    # Workers import the researcher's loop, so they get the payload too.
    assert worker["template"]["spec"]["initContainers"][0]["name"] == "tau-payload"
    assert obj["metadata"]["annotations"][keys.WORKLOADSPEC_EXECUTION] == '{"launcher":"ray-tune"}'
    driver_source = compile(
        __import__("tau.render.tune_driver", fromlist=["SOURCE"]).SOURCE, "driver", "exec"
    )
    assert driver_source is not None


def test_role_resources_override_defaults_and_request_alone_sets_limit():
    intent = base(
        engine="rayjob",
        launcher="ray-train",
        workers=1,
        gpus_per_worker=0,
        resources=Resources(cpu_request="3"),
        head_resources=Resources(memory_request="4Gi"),
    )
    head, worker = head_and_worker(rayjob_of(intent))
    head_res = head["template"]["spec"]["containers"][0]["resources"]
    assert head_res["requests"] == {"cpu": "3", "memory": "4Gi"}
    assert head_res["limits"] == {"cpu": "3", "memory": "4Gi"}
    worker_res = worker["template"]["spec"]["containers"][0]["resources"]
    assert worker_res["requests"] == {"cpu": "3", "memory": "8Gi"}


def test_rayjob_name_limit_is_47():
    rayjob_of(base(engine="rayjob", launcher="ray-train", name="a" * 47, gpus_per_worker=1))
    with pytest.raises(RenderError, match="KubeRay limit is 47"):
        render(base(engine="rayjob", launcher="ray-train", name="a" * 48, gpus_per_worker=1))


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ((("MASTER_ADDR", "x"),), "reserved \\(set by Ray runtime\\)"),
        ((("NCCL_DEBUG", "INFO"),), "allow_nccl_override"),
    ],
)
def test_ray_reserved_env(env, message):
    with pytest.raises(RenderError, match=message):
        render(base(engine="rayjob", launcher="ray-train", gpus_per_worker=1, env=env))


def test_nccl_override_replaces_the_default_when_allowed():
    intent = base(
        engine="rayjob",
        launcher="ray-train",
        gpus_per_worker=1,
        env=(("NCCL_DEBUG", "INFO"),),
        allow_nccl_override=True,
    )
    head, _ = head_and_worker(rayjob_of(intent))
    assert env_of(head["template"]["spec"]["containers"][0])["NCCL_DEBUG"] == "INFO"


def test_worker_and_gpu_bounds():
    with pytest.raises(RenderError, match=r"compute\.workers"):
        render(base(engine="rayjob", launcher="ray-train", workers=0))
    with pytest.raises(RenderError, match="gpus_per_worker"):
        render(base(engine="rayjob", launcher="ray-train", gpus_per_worker=9))


def head_pod(rayjob):
    return rayjob["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]


def test_the_offload_sidecar_runs_beside_the_driver_on_the_head():
    (rayjob,) = render(intents.ray_stellar())
    head = head_pod(rayjob)
    sidecar = head["initContainers"][-1]
    assert (sidecar["name"], sidecar["restartPolicy"]) == ("metrics-offload", "Always")
    args = sidecar["args"]
    assert args[args.index("--kind") + 1] == "RayJob"
    assert args[args.index("--history") + 1] == (
        "/data/projects/taugrid-default/runs/portal-ray-stellar/metrics-history-attempt-0/*.jsonl"
    )
    assert args[args.index("--submission-id") + 1] == "5ub5ub5ub5ub5ub5ub5ub5ub5ub5ub5u"
    mounts = {m["mountPath"]: m["name"] for m in sidecar["volumeMounts"]}
    assert mounts == {"/data": "data", "/var/run/tau": "tau-runtime"}
    ray_head = head["containers"][0]
    assert {m["mountPath"] for m in ray_head["volumeMounts"]} >= {"/data", "/var/run/tau"}
    workers = rayjob["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]
    assert all(c["name"] != "metrics-offload" for c in workers.get("initContainers", []))
    annotations = rayjob["metadata"]["annotations"]
    assert annotations[keys.STELLAR_EXPERIMENT_ID] == "ray-plus-stellar"
    assert annotations[keys.STELLAR_GROUP_VALUE] == "default"


def test_the_driver_entrypoint_publishes_staged_outputs_and_reports_completion():
    (rayjob,) = render(intents.ray_stellar())
    entrypoint = rayjob["spec"]["entrypoint"]
    assert entrypoint.startswith("set -eu\n")
    assert "set +e\n" in entrypoint and "exec python3" not in entrypoint
    assert "python3 /script/train.py &" in entrypoint
    assert "tau_publication=feedfacefeedfacefeedface" in entrypoint
    assert "tau_complete succeeded workload-entrypoint-exit" in entrypoint
    env = {e["name"]: e.get("value") for e in head_pod(rayjob)["containers"][0]["env"]}
    assert env[keys.ENV_OUTPUT_STAGING_DIR] == "/mnt/tau-output/portal-ray-stellar"
    assert env[keys.ENV_METRICS_DONE_FILE] == "/var/run/tau/metrics-done"


def test_run_working_dir_ships_as_ray_runtime_env_working_dir():
    import yaml

    (rayjob,) = render(intents.rayjob_working_dir())
    spec = rayjob["spec"]
    assert yaml.safe_load(spec["runtimeEnvYAML"]) == {
        "working_dir": "file:///script/_tau_project.zip"
    }
    assert "cd /data" not in spec["entrypoint"]
    assert spec["entrypoint"].endswith("exec python3 train.py\n")
    head, worker = head_and_worker(rayjob)
    for group in (head, worker):  # the zip must exist on every node that runs tasks
        (init,) = group["template"]["spec"]["initContainers"]
        envelope = json.loads(base64.b64decode(env_of(init)[keys.ENV_PAYLOAD_B64]))
        assert [f["name"] for f in envelope["files"]] == ["_tau_project.zip"]
