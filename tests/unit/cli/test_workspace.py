"""`tau workspace` offline behaviour through the real entry point (no cluster involved)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tau.cli.main import cli, run

TOKEN = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZUBleGFtcGxlLmNvbSJ9.c2lnbmF0dXJlLWJ5dGVz"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAU_CONFIG_DIR", str(tmp_path / "tau-config"))
    monkeypatch.delenv("TAU_CONTEXT", raising=False)
    monkeypatch.chdir(tmp_path)


def tau(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(cli, "tau", list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def scaffold(capsys, *extra: str) -> Path:
    code, _, err = tau(
        capsys, "workspace", "init-repo", "vision", "--image", "example.azurecr.io/v:1", *extra
    )
    assert code == 0, err
    repo = Path("vision").resolve()
    (repo / ".git").mkdir()
    return repo


def test_help_lists_the_verbs(capsys):
    code, out, _ = tau(capsys, "workspace", "--help")
    assert code == 0
    for verb in ("connection", "list", "status", "check", "create", "adopt", "quota", "init-repo"):
        assert verb in out


def test_offline_connection_of_a_scaffolded_repository(capsys, monkeypatch):
    repo = scaffold(capsys, "--workspace", "research", "--kube-context", "lab")
    monkeypatch.chdir(repo / "src")
    code, out, err = tau(capsys, "workspace", "connection", "--offline")
    assert code == 0, err
    assert out.splitlines()[0] == "Workspace connection configuration is valid."
    assert "Descriptor:    tau/workspace.connection.yaml" in out
    assert out.splitlines()[-1] == "Cluster access was not checked."
    code, out, _ = tau(capsys, "workspace", "connection", "--offline", "-o", "json")
    assert json.loads(out)["context"] == "lab"


def test_an_explicit_descriptor_path_is_accepted(capsys):
    repo = scaffold(capsys, "--workspace", "research", "--kube-context", "lab")
    path = str(repo / "tau" / "workspace.connection.yaml")
    code, out, err = tau(capsys, "workspace", "connection", path, "--offline", "-o", "yaml")
    assert code == 0, err
    assert yaml.safe_load(out)["workspace"] == "research"


def test_a_mistyped_descriptor_path_is_a_usage_error_naming_it(capsys):
    code, out, err = tau(capsys, "workspace", "connection", "--offline", "nowhere/conn.yaml")
    assert code == 2 and out == ""
    assert err == "error: PATH nowhere/conn.yaml: no such descriptor file or directory\n"


def test_a_repository_without_a_descriptor_fails_naming_the_boundary(capsys):
    repo = scaffold(capsys)
    code, _, err = tau(capsys, "workspace", "connection", str(repo), "--offline")
    assert code == 2
    assert err.startswith("error: descriptor: Tau workspace connection descriptor not found")
    assert f"repository boundary {repo}" in err
    assert "Traceback" not in err


def test_an_embedded_token_is_refused_and_never_echoed(capsys):
    repo = scaffold(capsys, "--workspace", "research", "--kube-context", "lab")
    descriptor = repo / "tau" / "workspace.connection.yaml"
    descriptor.write_text(descriptor.read_text() + f"  token: {TOKEN}\n")
    code, out, err = tau(capsys, "workspace", "connection", str(repo), "--offline")
    assert code == 2
    assert "credential-shaped content" in err
    assert TOKEN not in out + err


def test_assign_inspect_and_clear_a_local_assignment(capsys, monkeypatch):
    repo = scaffold(capsys)
    monkeypatch.chdir(repo)
    code, out, err = tau(
        capsys, "workspace", "connection", "assign", "research", "--context", "lab"
    )
    assert code == 0, err
    assert "Assigned workspace research (context lab)" in out
    code, out, _ = tau(capsys, "workspace", "connection", "inspect", "-o", "json")
    data = json.loads(out)
    assert (data["source"], data["workspace"], data["pinned"]) == ("assignment", "research", False)
    code, out, _ = tau(capsys, "workspace", "connection", "--offline")
    assert code == 0 and "local assignment" in out

    code, _, err = tau(capsys, "workspace", "connection", "assign", "other", "--context", "lab")
    assert code == 2 and "rerun with --replace" in err

    code, out, _ = tau(capsys, "workspace", "connection", "clear")
    assert code == 0 and out.startswith("Removed local assignment")
    code, _, err = tau(capsys, "workspace", "connection", "--offline")
    assert code == 2 and "descriptor not found" in err


def test_assign_is_refused_where_a_descriptor_is_checked_in(capsys, monkeypatch):
    repo = scaffold(capsys, "--workspace", "research", "--kube-context", "lab")
    monkeypatch.chdir(repo)
    code, _, err = tau(capsys, "workspace", "connection", "assign", "x", "--context", "lab")
    assert code == 2
    assert "is checked in and always wins" in err


def test_init_repo_aks_flags_go_together(capsys):
    code, _, err = tau(capsys, "workspace", "init-repo", "x", "--image", "i", "--aks-cluster", "c")
    assert code == 2 and "all or none" in err


def test_quota_request_preview_needs_no_cluster(capsys):
    code, out, err = tau(
        capsys,
        "workspace",
        "quota",
        "request",
        "research",
        "--resource",
        "h200",
        "--requested",
        "4",
        "--reason",
        "eval sweep",
    )
    assert code == 0, err
    obj = yaml.safe_load(out)
    assert (obj["kind"], obj["metadata"]["name"]) == (
        "TauQuotaRequest",
        "research-h200-quota-request",
    )


def test_init_is_the_enable_a_workspace_page_s_spelling_of_init_repo(capsys):
    code, _, err = tau(
        capsys,
        "workspace",
        "init",
        "docs-demo",
        "--image",
        "example.azurecr.io/v:1",
        "--workspace",
        "research",
        "--kube-context",
        "lab",
    )
    assert code == 0, err
    assert (Path("docs-demo") / "tau" / "workspace.connection.yaml").is_file()
