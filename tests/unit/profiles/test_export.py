"""`tau cluster profiles export --output`: a bad destination is found before any API call."""

from __future__ import annotations

import pytest

from tau.errors import UsageError
from tau.kube import KubeClient
from tau.profiles.live import export_profiles
from tests.unit.closed_port import closed_port_kubeconfig


def test_a_missing_output_directory_is_refused_before_contacting_the_cluster(tmp_path):
    client = KubeClient(closed_port_kubeconfig(tmp_path / "kubeconfig"), "x")
    target = tmp_path / "missing" / "profiles.yaml"
    with pytest.raises(UsageError) as caught:  # a contacted cluster would be UnavailableError
        export_profiles(client, target)
    assert caught.value.one_line() == (
        f"--output {target}: directory {target.parent} does not exist"
    )
