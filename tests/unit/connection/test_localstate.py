"""Local state: private files, worktree-scoped assignments, pins, drift and readiness TTL."""

from __future__ import annotations

import json
import stat
from datetime import timedelta

import pytest

from tau.connection import discover_connection, find_repository, localstate
from tau.errors import RuntimeFailure, UsageError, ValidationError


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_config_dir_honours_tau_config_dir_then_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("TAU_CONFIG_DIR", str(tmp_path / "explicit"))
    assert localstate.config_dir() == tmp_path / "explicit"
    monkeypatch.delenv("TAU_CONFIG_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert localstate.config_dir() == tmp_path / "xdg" / "tau"


def test_private_files_are_0600_in_0700_directories_and_replace_atomically(tmp_path):
    target = tmp_path / "state" / "nested" / "pin.json"
    localstate.write_json(target, {"a": 1})
    localstate.write_json(target, {"a": 2})
    assert json.loads(target.read_text()) == {"a": 2}
    assert mode(target) == 0o600
    assert mode(target.parent) == 0o700
    assert [p.name for p in target.parent.iterdir()] == ["pin.json"]


def test_an_unusable_config_dir_is_a_runtime_failure_naming_the_path(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    with pytest.raises(RuntimeFailure) as caught:
        localstate.write_json(blocker / "assignments" / "a.json", {"a": 1})
    line = caught.value.one_line()
    assert line.startswith(f"local state: cannot write {blocker / 'assignments'} (")
    assert "TAU_CONFIG_DIR" in line and "(owner: researcher (local Tau state))" in line


def test_safe_filename_and_short_hash():
    assert localstate.safe_filename("My Ctx/@aks") == "my-ctx--aks"
    assert localstate.safe_filename("..") == "connection"
    assert localstate.short_hash(" x ") == localstate.short_hash("x")
    assert len(localstate.short_hash("x")) == 12


def test_assignment_round_trip_is_scoped_to_one_worktree(tmp_path, make_repo, write_descriptor):
    first = make_repo(tmp_path / "first")
    second = make_repo(tmp_path / "second")
    descriptor = discover_connection(write_descriptor(tmp_path / "src").parent.parent).descriptor
    path, changed = localstate.save_assignment(find_repository(first), descriptor)
    assert changed and mode(path) == 0o600

    source = discover_connection(first)
    assert source.kind == "assignment"
    assert source.descriptor.digest == descriptor.digest
    assert localstate.load_assignment(find_repository(second)) is None


def test_a_checked_in_descriptor_wins_over_an_assignment(tmp_path, make_repo, write_descriptor):
    repo = make_repo(tmp_path / "repo")
    other = discover_connection(write_descriptor(tmp_path / "x", workspace="other").parent.parent)
    localstate.save_assignment(find_repository(repo), other.descriptor)
    write_descriptor(repo, workspace="research")
    source = discover_connection(repo)
    assert (source.kind, source.descriptor.workspace) == ("descriptor", "research")


def test_replacing_a_different_assignment_needs_replace(tmp_path, make_repo, write_descriptor):
    repo = find_repository(make_repo(tmp_path / "repo"))
    one = discover_connection(write_descriptor(tmp_path / "a", workspace="one").parent.parent)
    two = discover_connection(write_descriptor(tmp_path / "b", workspace="two").parent.parent)
    localstate.save_assignment(repo, one.descriptor)
    assert localstate.save_assignment(repo, one.descriptor)[1] is False
    with pytest.raises(UsageError, match="assignment to 'one'; rerun with --replace"):
        localstate.save_assignment(repo, two.descriptor)
    localstate.save_assignment(repo, two.descriptor, replace=True)
    assert localstate.load_assignment(repo).descriptor.workspace == "two"
    assert localstate.clear_assignment(repo) is not None
    assert localstate.load_assignment(repo) is None


def test_an_assignment_copied_from_another_worktree_is_refused(
    tmp_path, make_repo, write_descriptor
):
    first = find_repository(make_repo(tmp_path / "first"))
    second = find_repository(make_repo(tmp_path / "second"))
    descriptor = discover_connection(write_descriptor(tmp_path / "a").parent.parent).descriptor
    path, _ = localstate.save_assignment(first, descriptor)
    stolen = localstate.assignment_path(second)
    stolen.write_bytes(path.read_bytes())
    with pytest.raises(ValidationError, match="belongs to another worktree"):
        localstate.load_assignment(second)


def test_a_tampered_assignment_is_refused(tmp_path, make_repo, write_descriptor):
    repo = find_repository(make_repo(tmp_path / "repo"))
    descriptor = discover_connection(write_descriptor(tmp_path / "a").parent.parent).descriptor
    path, _ = localstate.save_assignment(repo, descriptor)
    record = json.loads(path.read_text())
    record["unexpected"] = True
    path.write_text(json.dumps(record))
    with pytest.raises(ValidationError, match="unreadable or malformed"):
        localstate.load_assignment(repo)


def pinned_state(source, **overrides) -> localstate.ConnectionState:
    descriptor = source.descriptor
    stamp = localstate.rfc3339(localstate.now())
    values = {
        "workspace": descriptor.workspace,
        "access_method": descriptor.access.method,
        "access_identity": descriptor.access_identity,
        "access_fingerprint": "sha256:aaa",
        "authorization_mode": descriptor.authorization.mode,
        "context_name": descriptor.context_name,
        "system_namespace": descriptor.system_namespace,
        "kubeconfig_path": "/k",
        "namespace": "research",
        "queue": "jobqueue",
        "required_role": descriptor.authorization.requiredRole or "",
        "repository_root": str(source.repository.real_root),
        "descriptor_path": str(source.path.resolve()),
        "descriptor_digest": descriptor.digest,
        "workspace_uid": "uid-1",
        "configured_at": stamp,
        "verified_at": stamp,
    }
    values.update(overrides)
    return localstate.ConnectionState(**values)


def test_an_unchanged_checkout_has_no_drift_and_changes_are_listed(
    tmp_path, make_repo, write_descriptor
):
    repo = make_repo(tmp_path / "repo")
    write_descriptor(repo)
    source = discover_connection(repo)
    state = pinned_state(source)
    assert localstate.pin_changes(state, source, "sha256:aaa") == []

    write_descriptor(repo, workspace="moved", context="other")
    moved = discover_connection(repo)
    changes = localstate.pin_changes(state, moved, "sha256:bbb")
    assert "workspace 'research' -> 'moved'" in changes
    assert "Kubernetes context 'lab' -> 'other'" in changes
    assert "access identity changed" in changes
    assert "descriptor digest changed" in changes
    assert "Kubernetes context target changed" in changes


def test_a_moved_checkout_changes_the_trust_identity(tmp_path, make_repo, write_descriptor):
    repo = make_repo(tmp_path / "repo")
    write_descriptor(repo)
    state = pinned_state(discover_connection(repo))
    clone = make_repo(tmp_path / "clone")
    write_descriptor(clone)
    changes = localstate.pin_changes(state, discover_connection(clone), "sha256:aaa")
    assert changes == ["repository trust identity changed", "descriptor trust target changed"]


def test_contract_drift_treats_an_empty_service_account_as_default(
    tmp_path, make_repo, write_descriptor
):
    repo = make_repo(tmp_path / "repo")
    write_descriptor(repo)
    state = pinned_state(discover_connection(repo))
    assert localstate.contract_changes(state, "uid-1", "research", "jobqueue", "default") == []
    changes = localstate.contract_changes(state, "uid-2", "other", "q2", "trainer")
    assert len(changes) == 4


def test_readiness_evidence_expires_after_five_minutes(tmp_path, make_repo, write_descriptor):
    repo = make_repo(tmp_path / "repo")
    write_descriptor(repo)
    source = discover_connection(repo)
    fresh = pinned_state(source)
    assert localstate.is_fresh(fresh)
    old = localstate.rfc3339(localstate.now() - timedelta(minutes=5, seconds=1))
    assert not localstate.is_fresh(pinned_state(source, verified_at=old))
    assert not localstate.is_fresh(fresh, ttl=timedelta(seconds=-1))


def test_state_round_trips_and_a_review_error_is_one_actionable_line(
    tmp_path, make_repo, write_descriptor
):
    repo = make_repo(tmp_path / "repo")
    write_descriptor(repo)
    source = discover_connection(repo)
    path = localstate.state_path(source)
    localstate.save_state(path, pinned_state(source))
    assert mode(path) == 0o600
    assert localstate.load_state(path).workspace_uid == "uid-1"
    assert json.loads(path.read_text())["schema"] == localstate.STATE_SCHEMA
    error = localstate.review_error("configured workspace connection changed", ["x -> y"])
    assert error.exit_code == 2
    assert "requires interactive review" in error.one_line()
    assert "interactive terminal" in error.one_line()


def test_cached_connections_lists_usable_pins_newest_first(
    tmp_path, make_repo, write_descriptor, tau_config_dir
):
    repo = make_repo(tmp_path / "repo")
    write_descriptor(repo)
    source = discover_connection(repo)
    base = tau_config_dir / "connections"
    older = localstate.rfc3339(localstate.now() - timedelta(hours=1))
    localstate.save_state(base / "a.json", pinned_state(source, verified_at=older))
    localstate.save_state(base / "b.json", pinned_state(source, namespace="newest"))
    localstate.save_state(base / "c.json", pinned_state(source, workspace_uid=""))
    listed = localstate.cached_connections()
    assert [state.namespace for state in listed] == ["newest", "research"]
    (base / "d.json").write_text(json.dumps({"schema": "tau.other.v9"}))
    with pytest.raises(ValidationError, match="unreadable or malformed"):
        localstate.cached_connections()
