"""RayService rendering: the Serve application, single- and multi-node clusters, goldens."""

from __future__ import annotations

import pytest
import yaml

from tau import keys
from tau.errors import ValidationError
from tau.render import redact_secrets
from tau.render.rayservice import render_rayservice

from . import golden, serve_intents
from .schema import validate_rendered

RAY = {name: fixture for name, fixture in serve_intents.FIXTURES.items() if "rayservice" in name}


def serve_config(rayservice: dict) -> dict:
    return yaml.safe_load(rayservice["spec"]["serveConfigV2"])


@pytest.mark.parametrize("fixture", sorted(RAY))
def test_rayservice_matches_golden_and_pod_schema(fixture):
    objects = render_rayservice(RAY[fixture]())
    validate_rendered(objects)
    golden.check(f"serve-{fixture}", golden.dump(redact_secrets(objects)))


def test_single_node_serves_from_the_head_with_the_checkpoint_mounted():
    (rs,) = render_rayservice(serve_intents.rayservice_single())
    labels = rs["metadata"]["labels"]
    assert labels[keys.KUEUE_QUEUE_NAME] == "jobqueue"
    assert labels[keys.SERVICE] == "policy" and labels[keys.PROFILE] == "model-serve"
    cluster = rs["spec"]["rayClusterConfig"]
    assert "workerGroupSpecs" not in cluster
    assert cluster["rayVersion"] == "2.40.0"
    head = cluster["headGroupSpec"]["template"]["spec"]
    (container,) = head["containers"]
    assert {"name": "serve", "containerPort": 8000} in container["ports"]
    assert container["resources"]["limits"][keys.NVIDIA_GPU] == "1"
    env = {e["name"]: e for e in container["env"]}
    assert env["TAU_MODEL_PATH"]["value"] == "/data/checkpoints/finetunes/policy-7/final"
    assert env["HF_TOKEN"]["valueFrom"]["secretKeyRef"] == {
        "name": "hf-credentials",
        "key": "token",
    }
    assert {"name": "tau-checkpoint", "mountPath": "/data", "readOnly": True} in container[
        "volumeMounts"
    ]
    assert {"name": "tau-shm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}} in head[
        "volumes"
    ]


def test_serve_config_carries_app_replicas_pip_and_literal_env_but_never_secrets():
    (rs,) = render_rayservice(serve_intents.rayservice_single())
    config = serve_config(rs)
    assert config["http_options"] == {"host": "0.0.0.0", "port": 8000}
    (app,) = config["applications"]
    assert (app["name"], app["route_prefix"], app["import_path"]) == ("default", "/", "serve:app")
    assert app["deployments"] == [{"name": "default", "num_replicas": 2}]
    assert app["runtime_env"]["pip"] == ["numpy==2.1.3"]
    assert app["runtime_env"]["env_vars"]["LOG_LEVEL"] == "info"
    assert list(app["runtime_env"]["env_vars"]) == sorted(app["runtime_env"]["env_vars"])
    assert "HF_TOKEN" not in rs["spec"]["serveConfigV2"]
    assert "hf-credentials" not in rs["spec"]["serveConfigV2"]


def test_autoscaling_config_uses_the_serve_defaults_and_the_given_port():
    (rs,) = render_rayservice(serve_intents.rayservice_autoscaling())
    (app,) = serve_config(rs)["applications"]
    assert app["deployments"] == [
        {
            "name": "default",
            "autoscaling_config": {
                "min_replicas": 0,
                "max_replicas": 4,
                "target_num_ongoing_requests_per_replica": 5,
                "downscale_delay_s": 120,
            },
        }
    ]
    assert serve_config(rs)["http_options"]["port"] == 9000
    head = rs["spec"]["rayClusterConfig"]["headGroupSpec"]["template"]["spec"]
    assert "tolerations" not in head  # CPU-only profile


def test_multi_node_keeps_the_head_cpu_only_and_spreads_gpu_workers_over_hosts():
    (rs,) = render_rayservice(serve_intents.rayservice_multi_node())
    cluster = rs["spec"]["rayClusterConfig"]
    head = cluster["headGroupSpec"]
    assert head["rayStartParams"] == {"dashboard-host": "0.0.0.0", "num-cpus": "0", "num-gpus": "0"}
    head_container = head["template"]["spec"]["containers"][0]
    assert head_container["resources"]["requests"] == {"cpu": "1", "memory": "2Gi"}
    assert {"name": "gcs-server", "containerPort": 6379} in head_container["ports"]
    assert "annotations" not in head["template"]["metadata"]  # no podset topology on the head
    (workers,) = cluster["workerGroupSpecs"]
    assert workers["groupName"] == "gpu-workers"
    assert workers["replicas"] == workers["minReplicas"] == workers["maxReplicas"] == 2
    assert workers["rayStartParams"] == {"num-gpus": "8"}
    pod = workers["template"]["spec"]
    container = pod["containers"][0]
    assert container["resources"]["requests"] == {
        "cpu": "1",
        "memory": "512Gi",
        keys.NVIDIA_GPU: "8",
    }
    (term,) = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == keys.HOSTNAME_LABEL
    assert term["matchLabelKeys"] == [keys.RAY_CLUSTER]
    assert term["labelSelector"]["matchLabels"] == {
        keys.RAY_NODE_TYPE: "worker",
        keys.SERVICE: "llm-2x8",
    }
    env = {e["name"]: e["value"] for e in container["env"]}
    assert (env["TAU_SERVE_NODES"], env["TAU_SERVE_GPUS_PER_NODE"]) == ("2", "8")
    assert [e["name"] for e in container["env"]].count("TAU_SERVE_NODES") == 1


def test_multi_node_shape_env_may_be_repeated_but_not_contradicted():
    intent = serve_intents.replace(
        serve_intents.rayservice_multi_node(), env=(("TAU_SERVE_GPUS_PER_NODE", "4"),)
    )
    with pytest.raises(ValidationError) as caught:
        render_rayservice(intent)
    assert caught.value.one_line().startswith(
        'TAU_SERVE_GPUS_PER_NODE is supplied by the workload profile and must be "8"'
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "a" * 48}, "service name 'aaaa"),
        ({"name": "9lives"}, "service name '9lives' must be a DNS-1035 label"),
        ({"pip": ("numpy", " ")}, "runtime.pip[1]: blank entry"),
        ({"env": (("TAU_MODEL_PATH", "/x"),)}, "--env TAU_MODEL_PATH is set by Tau"),
    ],
)
def test_render_refusals_name_the_flag(changes, message):
    intent = serve_intents.replace(serve_intents.rayservice_single(), **changes)
    with pytest.raises(ValidationError) as caught:
        render_rayservice(intent)
    assert caught.value.one_line().startswith(message)


def test_a_missing_queue_is_refused():
    intent = serve_intents.rayservice_single()
    intent = serve_intents.replace(
        intent, placement=serve_intents.dataclasses.replace(intent.placement, queue="")
    )
    with pytest.raises(ValidationError, match="render RayService: Kueue LocalQueue is required"):
        render_rayservice(intent)


def test_rendering_is_deterministic():
    for fixture in RAY.values():
        assert render_rayservice(fixture()) == render_rayservice(fixture())
