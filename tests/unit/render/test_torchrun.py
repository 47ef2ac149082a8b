"""Multi-node torchrun: an Indexed Job whose pod 0 hosts c10d rendezvous behind a Service."""

from __future__ import annotations

import pytest

from tau import keys
from tau.render import RenderError, render

from .intents import base, torchrun_2x4
from .schema import validate_rendered


def test_two_nodes_render_a_headless_service_then_an_indexed_job():
    service, job = render(torchrun_2x4())
    assert service["kind"] == "Service"
    assert service["metadata"]["name"] == "ddp-headless"
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["publishNotReadyAddresses"] is True
    assert service["spec"]["selector"] == {keys.JOB_NAME_LABEL: "ddp"}
    assert service["spec"]["ports"] == [{"name": "c10d", "port": 29500, "protocol": "TCP"}]
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == 2
    assert spec["parallelism"] == 2
    assert spec["template"]["spec"]["subdomain"] == "ddp-headless"
    validate_rendered([service, job])


def test_rendezvous_flags_and_master_address():
    _, job = render(torchrun_2x4())
    main = job["spec"]["template"]["spec"]["containers"][0]
    command = main["command"][2]
    for flag in (
        "--nnodes=2",
        "--node_rank=$JOB_COMPLETION_INDEX",
        "--rdzv-backend=c10d",
        "--rdzv-endpoint=ddp-0.ddp-headless:29500",
        "--rdzv-id=ddp",
        "--nproc_per_node=4",
    ):
        assert flag in command
    assert command.endswith("/tmp/tau-entrypoint.py --compile --lr=0.001")
    env = {e["name"]: e.get("value") for e in main["env"]}
    assert env[keys.ENV_MASTER_ADDR] == "ddp-0.ddp-headless"
    assert env[keys.ENV_MASTER_PORT] == "29500"
    assert env[keys.ENV_OMP_NUM_THREADS] == "1"


def test_shared_memory_volume_for_multi_process():
    _, job = render(torchrun_2x4())
    pod = job["spec"]["template"]["spec"]
    assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}} in pod["volumes"]
    assert {"name": "dshm", "mountPath": "/dev/shm"} in pod["containers"][0]["volumeMounts"]


def test_single_node_torchrun_is_standalone_without_a_service():
    objects = render(base(launcher="torchrun", processes_per_node=2, gpus=2))
    assert [o["kind"] for o in objects] == ["Job"]
    command = objects[0]["spec"]["template"]["spec"]["containers"][0]["command"][2]
    assert "--standalone --nproc_per_node=2" in command
    env = {
        e["name"]: e.get("value")
        for e in objects[0]["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env[keys.ENV_MASTER_ADDR] == "localhost"


def test_execution_annotation_and_topology_on_the_pod_template():
    _, job = render(torchrun_2x4())
    assert job["metadata"]["annotations"][keys.WORKLOADSPEC_EXECUTION] == (
        '{"launcher":"torchrun","processes_per_node":4,"nodes":2}'
    )
    pod_annotations = job["spec"]["template"]["metadata"]["annotations"]
    assert pod_annotations[keys.KUEUE_PODSET_REQUIRED_TOPOLOGY] == keys.NETWORK_DOMAIN
    assert job["metadata"]["annotations"][keys.GPU_COUNT] == "8"


def test_name_must_leave_room_for_the_headless_suffix():
    render(base(name="a" * 54, launcher="torchrun", nodes=2))
    with pytest.raises(RenderError, match="at most 54 characters"):
        render(base(name="a" * 55, launcher="torchrun", nodes=2))


def test_torchrun_owns_its_rendezvous_env():
    for name in (keys.ENV_MASTER_ADDR, keys.ENV_MASTER_PORT, keys.ENV_JOB_COMPLETION_INDEX):
        with pytest.raises(RenderError, match="managed by torchrun"):
            render(base(launcher="torchrun", nodes=2, env=((name, "x"),)))


def test_torchrun_needs_a_python_entrypoint():
    from tau.render.intent import Script

    with pytest.raises(RenderError, match=r"must be a \.py file"):
        render(base(launcher="torchrun", script=Script("run.sh", b"#!/bin/sh\n")))
    with pytest.raises(RenderError, match=r"requires run\.entrypoint"):
        render(base(launcher="torchrun", script=None))
