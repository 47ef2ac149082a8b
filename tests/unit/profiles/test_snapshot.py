"""Snapshots freeze a ready revision for offline client dry-runs, and cannot be forged."""

from __future__ import annotations

import stat

import pytest
import yaml
from controller.world import profile

from tau.errors import ValidationError
from tau.profiles.select import ProfileUnavailable, accept_status
from tau.profiles.snapshot import load_snapshot, snapshot_from, write_snapshot

from .status import GENERATION, tau_cluster


def test_round_trip_selects_like_the_live_status(tmp_path):
    live = accept_status(tau_cluster())
    path = tmp_path / "profiles.snapshot.yaml"
    write_snapshot(snapshot_from(live), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    data = yaml.safe_load(path.read_text())
    assert data["kind"] == "TauWorkloadProfileSnapshot"
    assert data["tauClusterGeneration"] == GENERATION
    offline = load_snapshot(path)
    chosen = offline.select(namespace="team-a", team="research", lane="training")
    assert (
        chosen.stamps()
        == live.select(namespace="team-a", team="research", lane="training").stamps()
    )


def test_an_edited_snapshot_is_refused(tmp_path):
    path = tmp_path / "s.yaml"
    write_snapshot(snapshot_from(accept_status(tau_cluster())), path)
    data = yaml.safe_load(path.read_text())
    data["profiles"][0]["gpusPerWorker"] = 8
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ValidationError, match="does not match"):
        load_snapshot(path)
    data["tauClusterGeneration"] = 0
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ValidationError, match="tauClusterGeneration"):
        load_snapshot(path)
    path.write_text("kind: Something\n")
    with pytest.raises(ValidationError, match="not a TauWorkloadProfileSnapshot"):
        load_snapshot(path)


def test_export_refuses_a_revision_with_an_unready_profile(tmp_path):
    obj = tau_cluster(profile(), profile(name="broken", applicability={"namespaces": ["nowhere"]}))
    obj["status"]["conditions"][0].update(status="True")
    with pytest.raises(ProfileUnavailable, match="cannot export"):
        snapshot_from(accept_status(obj))
    assert not list(tmp_path.iterdir())
