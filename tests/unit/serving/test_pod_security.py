"""Offline, `tau serve deploy` renders pods for Pod Security `restricted`: the level a workspace
namespace enforces by default, and the one a researcher (who cannot read Namespaces) assumes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from render.pod_security import violations
from render.schema import pod_templates

from tau.cli.main import cli, run

from .profiles import CPU, GPU, NAMESPACE, snapshot


@pytest.fixture(scope="module")
def snap(tmp_path_factory) -> Path:
    return snapshot(tmp_path_factory.mktemp("serve") / "profiles.snapshot.yaml")


@pytest.mark.parametrize(("kind", "profile"), [("deployment", CPU), ("rayservice", GPU)])
def test_an_offline_render_passes_pod_security_restricted(capsys, snap, kind, profile):
    argv = ["serve", "deploy", "svc", "--kind", kind, "--profile", profile, "-n", NAMESPACE]
    argv += ["--image", "img:1", "--dry-run=client"]
    if kind == "deployment":
        argv += ["--init", "warm=img:1", "--sidecar", "proxy=envoy:1"]
    code = run(cli, "tau", [*argv, "--workload-profile-snapshot", str(snap)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    specs = [
        template["spec"]
        for obj in yaml.safe_load_all(captured.out)
        if obj
        for template in pod_templates(obj)
    ]
    assert specs
    for spec in specs:
        assert violations(spec) == []
        assert spec["securityContext"]["runAsUser"] == 65532
