"""Isolated kubeconfigs hold exactly one context and are private files."""

from __future__ import annotations

import stat

import pytest
import yaml

from tau.connection.kubeconfig import cluster_fingerprint, isolate, load_merged, write_isolated
from tau.kube.errors import AccessError


def kubeconfig(path, contexts: dict[str, tuple[str, str]], current: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    clusters = sorted({cluster for cluster, _ in contexts.values()})
    users = sorted({user for _, user in contexts.values()})
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": current,
                "clusters": [
                    {
                        "name": c,
                        "cluster": {
                            "server": f"https://{c}:6443",
                            "certificate-authority": "ca.crt",
                        },
                    }
                    for c in clusters
                ],
                "users": [{"name": u, "user": {"token": f"secret-of-{u}"}} for u in users],
                "contexts": [
                    {"name": name, "context": {"cluster": c, "user": u}}
                    for name, (c, u) in contexts.items()
                ],
            }
        )
    )


def test_only_the_named_context_cluster_and_user_are_copied(tmp_path):
    source = tmp_path / "home" / "config"
    kubeconfig(source, {"lab": ("lab", "alice"), "prod": ("prod", "admin")}, current="prod")
    isolated = isolate(load_merged([source]), "lab")
    assert isolated["current-context"] == "lab"
    assert [c["name"] for c in isolated["clusters"]] == ["lab"]
    assert [u["name"] for u in isolated["users"]] == ["alice"]
    assert "secret-of-admin" not in yaml.safe_dump(isolated)
    assert isolated["clusters"][0]["cluster"]["certificate-authority"] == str(
        (tmp_path / "home" / "ca.crt").resolve()
    )


def test_the_first_kubeconfig_defining_a_name_wins(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    kubeconfig(first, {"lab": ("lab", "alice")}, "lab")
    kubeconfig(second, {"lab": ("lab", "mallory")}, "lab")
    merged = load_merged([first, second])
    assert isolate(merged, "lab")["users"][0]["name"] == "alice"


def test_a_missing_context_is_an_access_error(tmp_path):
    source = tmp_path / "config"
    kubeconfig(source, {"lab": ("lab", "alice")}, "lab")
    with pytest.raises(AccessError, match=r'^access: Kubernetes context "nope" is not in'):
        isolate(load_merged([source]), "nope")


def test_the_fingerprint_follows_the_cluster_entry(tmp_path):
    source = tmp_path / "config"
    kubeconfig(source, {"lab": ("lab", "alice")}, "lab")
    merged = load_merged([source])
    before = cluster_fingerprint(merged, "lab")
    merged["clusters"][0]["cluster"]["server"] = "https://elsewhere:6443"
    assert cluster_fingerprint(merged, "lab") != before


def test_the_isolated_copy_is_mode_0600_in_a_0700_directory(tmp_path):
    source = tmp_path / "config"
    kubeconfig(source, {"lab": ("lab", "alice")}, "lab")
    target = write_isolated(
        tmp_path / "tau" / "kubeconfigs" / "lab.yaml", isolate(load_merged([source]), "lab")
    )
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700
