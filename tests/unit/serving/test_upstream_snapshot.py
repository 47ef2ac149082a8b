"""Upstream's serving snapshot renders offline through `tau serve`, stamped with its own hash.

Upstream's offline-render fixture is a serving profile (lane `serving`, team `research`,
namespace `taugrid-default`, eight one-GPU workers). Serving is the `serving` lane and its
authorization boundary is the namespace, so the same command line that renders it upstream
renders it here; a profile of another lane is refused.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from controller.world import profile
from profiles.status import tau_cluster

from tau import keys
from tau.cli.main import cli, run
from tau.profiles.select import accept_status
from tau.profiles.snapshot import snapshot_from, write_snapshot

UPSTREAM_SNAPSHOT = (
    Path(__file__).resolve().parents[1]
    / "profiles"
    / "fixtures"
    / "upstream"
    / "serve-h100-eight.snapshot.yaml"
)
UPSTREAM_HASH = "ee32774f1376b6b8bf80703973d71f08f71e04511da40dd69852f9dfdd4d3cc9"


def tau(capsys, *args: str) -> tuple[int, str, str]:
    code = run(cli, "tau", list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def deploy(snapshot: Path, *extra: str, profile: str = "h100-nvl-8node") -> list[str]:
    return [
        "serve",
        "deploy",
        "svc",
        "--profile",
        profile,
        "--image",
        "img:1",
        "--dry-run=client",
        "--workload-profile-snapshot",
        str(snapshot),
        *extra,
    ]


@pytest.fixture
def upstream(tmp_path) -> Path:
    return Path(shutil.copy(UPSTREAM_SNAPSHOT, tmp_path / UPSTREAM_SNAPSHOT.name))


def test_upstream_serving_snapshot_renders_a_rayservice_stamped_with_its_hash(capsys, upstream):
    code, out, err = tau(capsys, *deploy(upstream, "-n", "taugrid-default", "--nodes", "8"))
    assert code == 0, err
    (service,) = [doc for doc in yaml.safe_load_all(out) if doc]
    assert service["kind"] == "RayService"
    meta = service["metadata"]
    assert meta["annotations"][keys.WORKLOAD_PROFILE_SET_HASH] == UPSTREAM_HASH
    assert meta["annotations"][keys.TAU_CLUSTER_GENERATION] == "23"
    assert meta["annotations"][keys.WORKLOAD_PROFILE] == "h100-nvl-8node"
    assert meta["annotations"][keys.GPU_COUNT] == "8"
    assert meta["labels"][keys.KUEUE_QUEUE_NAME] == "jobqueue"
    (workers,) = service["spec"]["rayClusterConfig"]["workerGroupSpecs"]
    assert workers["replicas"] == workers["minReplicas"] == workers["maxReplicas"] == 8
    (container,) = workers["template"]["spec"]["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert "offline" in err


def test_upstream_serving_snapshot_is_scoped_to_its_namespace(capsys, upstream):
    code, out, err = tau(capsys, *deploy(upstream, "-n", "other-team", "--nodes", "8"))
    assert code == 2 and out == ""
    assert "namespace 'other-team' is not in taugrid-default" in err


def test_an_edited_upstream_snapshot_is_refused(capsys, upstream):
    upstream.write_text(upstream.read_text().replace("workerCount: 8", "workerCount: 9"))
    code, out, err = tau(capsys, *deploy(upstream, "-n", "taugrid-default", "--nodes", "9"))
    assert code == 2 and out == ""
    assert "does not match its profiles" in err


def test_a_profile_of_another_lane_does_not_serve(capsys, tmp_path):
    training = profile(name="research.training.1x")
    path = tmp_path / "profiles.snapshot.yaml"
    write_snapshot(snapshot_from(accept_status(tau_cluster(training))), path)
    code, out, err = tau(capsys, *deploy(path, "-n", "team-a", profile="research.training.1x"))
    assert code == 2 and out == ""
    assert "lane 'serving' is not in training" in err
