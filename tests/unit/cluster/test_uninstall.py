"""Uninstall: the queue-drain upgrade never installs, waits, resets or rolls back."""

from __future__ import annotations

from tau.cluster.chart import DEFAULT_CHART, ChartRef
from tau.cluster.uninstall import (
    QueueObjects,
    UninstallOptions,
    drain_args,
    queue_objects,
    recovery_guidance,
    uninstall_args,
)


def _after(args: list[str], flag: str) -> str:
    """The value passed right after `flag`."""
    return args[args.index(flag) + 1]


def options(**changes) -> UninstallOptions:
    base = dict(
        chart=ChartRef(DEFAULT_CHART), release="taugrid", namespace="tau-system", context="prod"
    )
    return UninstallOptions(**{**base, **changes})


def test_drain_reuses_values_at_the_deployed_version_and_only_disables_the_queue(helm4):
    args = drain_args(options(), "CHART", "0.3.1", helm4)
    assert args[:3] == ["upgrade", "taugrid", "CHART"]
    assert _after(args, "--version") == "0.3.1"
    assert "--reuse-values" in args
    assert _after(args, "--set") == "baselineQueue.enabled=false"
    for forbidden in ("--install", "--atomic", "--wait", "--reset-values", "--create-namespace"):
        assert forbidden not in args
    assert "--force-conflicts" in args


def test_uninstall_args_follow_the_flags():
    args = uninstall_args(options(keep_history=True))
    assert args[:2] == ["uninstall", "taugrid"]
    assert "--ignore-not-found" in args and "--wait" in args and "--keep-history" in args
    assert "--dry-run" not in args
    assert "--wait" not in uninstall_args(options(wait=False))


def test_queue_objects_come_from_release_values():
    values = {
        "baselineQueue": {
            "name": "research",
            "flavor": {"name": "cpu"},
            "gpu": {"enabled": True, "flavors": [{"name": "h200-pool"}]},
            "topology": {"enabled": False, "name": "t"},
        }
    }
    objects = queue_objects(values)
    assert objects.names() == [
        "clusterqueue/research",
        "resourceflavor/cpu",
        "resourceflavor/h200-pool",
    ]
    assert queue_objects({"baselineQueue": {"enabled": False}}) is None


def test_recovery_guidance_names_every_configured_object():
    text = recovery_guidance(QueueObjects("jobqueue", ("cpu",), None))
    assert "clusterqueue/jobqueue" in text and "resourceflavor/cpu" in text
    assert "topology/" not in text
