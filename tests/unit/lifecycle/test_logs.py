"""Which head container `tau logs` reads for a RayJob."""

from __future__ import annotations

import pytest

from tau import keys
from tau.errors import UsageError
from tau.lifecycle.logs import LogOptions, ray_log_container


def head(*containers: str, init: tuple[str, ...] = ("tau-payload",)) -> dict:
    return {
        "metadata": {"name": "run-head-x"},
        "spec": {
            "initContainers": [{"name": name} for name in init],
            "containers": [{"name": name} for name in containers],
        },
    }


def test_a_head_rendered_by_tau_is_read_from_its_driver_log_container() -> None:
    pod = head("ray-head", "metrics-offload", keys.DRIVER_LOG_CONTAINER)
    for opts in (LogOptions(), LogOptions(follow=True), LogOptions(tail=-1, timestamps=True)):
        assert ray_log_container(pod, opts) == (keys.DRIVER_LOG_CONTAINER, True)


def test_a_named_container_is_read_as_asked() -> None:
    pod = head("ray-head", keys.DRIVER_LOG_CONTAINER)
    assert ray_log_container(pod, LogOptions(container="ray-head")) == ("ray-head", False)
    assert ray_log_container(pod, LogOptions(container="tau-payload")) == ("tau-payload", False)


def test_a_head_without_the_sidecar_falls_back_to_its_ray_container() -> None:
    assert ray_log_container(head("ray-head", "extra"), LogOptions()) == ("ray-head", False)


def test_an_unknown_container_names_the_flag_and_the_pod_s_containers() -> None:
    with pytest.raises(UsageError) as raised:
        ray_log_container(head("ray-head", keys.DRIVER_LOG_CONTAINER), LogOptions(container="x"))
    assert raised.value.owner == "researcher: -c/--container"
    assert "tau-payload, ray-head, driver-log" in str(raised.value)
