"""The connect flow's local guarantees: review before use, cache reuse, nothing lost on failure.

The cluster-facing outcomes (Ready, Degraded, missing queue, missing verbs) are covered by
tests/e2e/test_workspace_connection.py against a real API server; here the API server is a
closed port, which proves which paths never contact it.
"""

from __future__ import annotations

import socket
from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from tau.connection import Interaction, connect, discover_connection, localstate
from tau.connection import kubeconfig as kubeconfigs
from tau.errors import RuntimeFailure
from tau.kube import UnavailableError
from tests.unit.closed_port import closed_port_kubeconfig
from tests.unit.descriptors import descriptor_text

DESCRIPTOR = descriptor_text()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    user_config = closed_port_kubeconfig(
        tmp_path / "kubeconfig", context="lab", token="very-secret-token"
    )
    monkeypatch.setenv("KUBECONFIG", str(user_config))
    monkeypatch.setenv("TAU_CONFIG_DIR", str(tmp_path / "tau"))
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "tau").mkdir()
    (root / "tau" / "workspace.connection.yaml").write_text(DESCRIPTOR)
    return root


def quiet(answer: str | None = None) -> Interaction:
    said: list[str] = []
    return Interaction(
        interactive=answer is not None, ask=lambda question: answer or "", say=said.append
    )


def pin(repo: Path, verified_ago: timedelta) -> localstate.ConnectionState:
    """A pin as a previous successful `tau workspace connection` leaves it."""
    source = discover_connection(repo)
    isolated = kubeconfigs.isolate(kubeconfigs.load_merged(), "lab")
    path = kubeconfigs.write_isolated(localstate.kubeconfig_path(source), isolated)
    descriptor = source.descriptor
    stamp = localstate.rfc3339(localstate.now() - verified_ago)
    state = localstate.ConnectionState(
        workspace="research",
        access_method="kubeconfig",
        access_identity=descriptor.access_identity,
        access_fingerprint=kubeconfigs.cluster_fingerprint(kubeconfigs.load_merged(), "lab"),
        authorization_mode="workspace-rbac",
        context_name="lab",
        system_namespace="tau-system",
        kubeconfig_path=str(path),
        namespace="research",
        queue="jobqueue",
        required_role="tau-researcher-v1",
        repository_root=str(source.repository.real_root),
        descriptor_path=str(source.path.resolve()),
        descriptor_digest=descriptor.digest,
        workspace_uid="uid-1",
        configured_at=stamp,
        verified_at=stamp,
    )
    localstate.save_state(localstate.state_path(source), state)
    return state


def tau_files(tmp_path: Path) -> list[str]:
    base = tmp_path / "tau"
    return sorted(p.relative_to(base).as_posix() for p in base.rglob("*") if p.is_file())


def test_first_use_needs_a_human_and_touches_nothing_without_one(repo, tmp_path):
    with pytest.raises(localstate.ReviewRequired) as caught:
        connect(discover_connection(repo), quiet())
    assert "has not been connected with Tau on this machine" in caught.value.one_line()
    assert caught.value.exit_code == 2
    assert not (tmp_path / "tau").exists()


def test_declining_the_review_writes_nothing(repo, tmp_path):
    with pytest.raises(RuntimeFailure, match="not confirmed"):
        connect(discover_connection(repo), quiet("n"))
    assert not (tmp_path / "tau").exists()


def test_an_answer_other_than_yes_or_no_is_refused(repo):
    with pytest.raises(Exception, match="answer yes or no"):
        connect(discover_connection(repo), quiet("maybe"))


def test_approved_but_unverifiable_leaves_no_pin_and_no_credentials(repo, tmp_path):
    with pytest.raises(UnavailableError) as caught:
        connect(discover_connection(repo), quiet("y"))
    assert caught.value.one_line().startswith("apiserver unavailable:")
    assert "very-secret-token" not in caught.value.one_line()
    assert tau_files(tmp_path) == []


def test_fresh_evidence_is_reused_without_contacting_the_cluster(repo):
    state = pin(repo, timedelta(minutes=1))
    connection = connect(discover_connection(repo), quiet(), use_cache=True)
    assert connection.cached
    assert (connection.namespace, connection.queue, connection.context) == (
        "research",
        "jobqueue",
        "lab",
    )
    assert str(connection.kubeconfig) == state.kubeconfig_path


def test_expired_evidence_is_revalidated_and_a_failure_keeps_the_old_pin(repo, tmp_path):
    pin(repo, timedelta(minutes=6))
    before = {name: (tmp_path / "tau" / name).read_bytes() for name in tau_files(tmp_path)}
    with pytest.raises(UnavailableError):
        connect(discover_connection(repo), quiet(), use_cache=True)
    after = {name: (tmp_path / "tau" / name).read_bytes() for name in tau_files(tmp_path)}
    assert after == before


def test_a_changed_kube_target_is_drift_that_needs_review(repo, tmp_path):
    pin(repo, timedelta(minutes=1))
    user_config = tmp_path / "kubeconfig"
    config = yaml.safe_load(user_config.read_text())
    config["clusters"][0]["cluster"]["server"] = "https://elsewhere.example:6443"
    user_config.write_text(yaml.safe_dump(config))
    with pytest.raises(localstate.ReviewRequired) as caught:
        connect(discover_connection(repo), quiet(), use_cache=True)
    assert "Kubernetes context target changed" in caught.value.one_line()


def test_too_old_a_tau_is_refused_before_anything_else(repo):
    descriptor = repo / "tau" / "workspace.connection.yaml"
    descriptor.write_text(DESCRIPTOR.replace("0.1.0", "99.0.0"))
    with pytest.raises(Exception, match=r"too old for this repository; install Tau 99\.0\.0"):
        connect(discover_connection(repo), quiet("y"))


def test_an_unreachable_private_cluster_repeats_the_network_instructions(repo):
    descriptor = repo / "tau" / "workspace.connection.yaml"
    descriptor.write_text(
        DESCRIPTOR + "network:\n  privateCluster: true\n  instructions: connect the lab VPN\n"
    )
    with pytest.raises(UnavailableError) as caught:
        connect(discover_connection(repo), quiet("y"))
    assert "this is a private cluster: connect the lab VPN" in caught.value.one_line()


def test_unattended_revalidation_gives_up_after_the_timeout(repo, tmp_path, monkeypatch):
    pin(repo, timedelta(minutes=6))
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections, never answers: a hung sign-in or API server
    user_config = tmp_path / "kubeconfig"
    config = yaml.safe_load(user_config.read_text())
    port = silent.getsockname()[1]
    config["clusters"][0]["cluster"]["server"] = f"https://127.0.0.1:{port}"
    monkeypatch.setenv("TAU_CONNECTION_REVALIDATION_TIMEOUT", "1")
    state_file = localstate.state_path(discover_connection(repo))
    # Same cluster entry name, new server: pin it first so only revalidation is exercised.
    state = localstate.load_state(state_file)
    user_config.write_text(yaml.safe_dump(config))
    state.access_fingerprint = kubeconfigs.cluster_fingerprint(kubeconfigs.load_merged(), "lab")
    localstate.save_state(state_file, state)
    try:
        with pytest.raises(localstate.ReviewRequired) as caught:
            connect(discover_connection(repo), quiet(), use_cache=True)
    finally:
        silent.close()
    line = caught.value.one_line()
    assert "revalidation timed out after 1s" in line
    assert "run a tau command in a terminal once to complete sign-in" in line
    assert not list((tmp_path / "tau" / "kubeconfigs").glob(".candidate-*"))
