"""Uninstall: the queue-drain upgrade never installs, waits, resets or rolls back."""

from __future__ import annotations

import json

import pytest

from tau.cluster.chart import DEFAULT_CHART, ChartRef
from tau.cluster.uninstall import (
    QueueObjects,
    UninstallOptions,
    UninstallOutcome,
    drain,
    drain_args,
    queue_objects,
    recovery_guidance,
    uninstall,
    uninstall_args,
)
from tau.errors import RuntimeFailure

from .conftest import RecordingHelm


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


VALUES = {"baselineQueue": {"enabled": True, "name": "jobqueue"}}
METADATA = {"chart": "taugrid", "version": "0.3.1"}


def recording(tmp_path, values=VALUES, metadata=METADATA, upgrade=0, uninstall_code=0):
    return RecordingHelm(
        tmp_path,
        {
            "get values": (0, json.dumps(values))
            if values is not None
            else (1, "Error: forbidden"),
            "get metadata": (0, json.dumps(metadata)),
            "upgrade --help": (0, "      --force-conflicts   force\n"),
            "upgrade": (upgrade, ""),
            "uninstall": (uninstall_code, ""),
        },
    )


def verbs(fake):
    return [" ".join(call[:2]) for call in fake.calls() if call[:2] != ["upgrade", "--help"]]


def test_drain_then_uninstall_is_exactly_one_upgrade_and_one_uninstall(tmp_path):
    fake = recording(tmp_path)
    outcome = drain(fake.helm, options(), lambda objs: [], print, sleep=lambda s: None)
    uninstall(fake.helm, options(), outcome, print)
    assert outcome.drained and outcome.notes == []
    assert verbs(fake) == ["get values", "get metadata", "upgrade taugrid", "uninstall taugrid"]
    (upgrade,) = [c for c in fake.calls() if c[:2] == ["upgrade", "taugrid"]]
    assert _after(upgrade, "--version") == "0.3.1" and _after(upgrade, "--kube-context") == "prod"


@pytest.mark.parametrize(
    ("change", "note"),
    [
        ({"values": {"baselineQueue": {"enabled": False}}}, None),
        ({"values": None}, "skipping the queue drain"),
        ({"metadata": {"chart": "other-chart", "version": "1.0.0"}}, "not taugrid"),
        ({"metadata": {"chart": "taugrid"}}, "version unknown"),
    ],
)
def test_drain_is_skipped_without_an_upgrade(tmp_path, change, note):
    fake = recording(tmp_path, **change)
    outcome = drain(fake.helm, options(), lambda objs: [], print, sleep=lambda s: None)
    assert not outcome.drained
    assert not [c for c in fake.calls() if c[:2] == ["upgrade", "taugrid"]]
    assert (note is None) == (outcome.notes == [])
    if note:
        assert note in outcome.notes[0]


def test_no_drain_on_dry_run_or_when_disabled(tmp_path):
    fake = recording(tmp_path)
    for opts in (options(dry_run=True), options(drain_queue=False)):
        assert drain(fake.helm, opts, lambda objs: [], print).drained is False
    assert fake.calls() == []


def test_objects_still_held_by_kueue_are_reported_after_the_settle_budget(tmp_path):
    fake = recording(tmp_path)
    naps = []
    outcome = drain(
        fake.helm, options(), lambda objs: ["clusterqueue/jobqueue"], print, sleep=naps.append
    )
    assert not outcome.drained and "clusterqueue/jobqueue" in outcome.notes[0]
    assert len(naps) == 30


def test_failed_drain_still_uninstalls_and_failed_uninstall_gives_recovery_guidance(tmp_path):
    fake = recording(tmp_path, upgrade=1, uninstall_code=1)
    outcome = drain(fake.helm, options(), lambda objs: [], print, sleep=lambda s: None)
    assert "queue drain failed" in outcome.notes[0]
    with pytest.raises(RuntimeFailure) as failure:
        uninstall(fake.helm, options(), outcome, print)
    assert "clusterqueue/jobqueue" in failure.value.one_line()
    assert verbs(fake)[-1] == "uninstall taugrid"


def test_recovery_guidance_is_suppressed_after_a_verified_drain(tmp_path):
    fake = recording(tmp_path, uninstall_code=1)
    outcome = UninstallOutcome(drained=True, objects=QueueObjects())
    with pytest.raises(RuntimeFailure) as failure:
        uninstall(fake.helm, options(), outcome, print)
    assert "finalizers" not in failure.value.one_line()
