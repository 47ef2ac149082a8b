"""`python -m hack.localcluster status` on a cluster whose processes are gone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hack.localcluster.cluster import STATE_FILE

ROOT = Path(__file__).resolve().parents[3]


def test_a_stopped_cluster_is_reported_stopped_not_unready(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    state = {
        "bin_dir": str(tmp_path / "bin"),
        "ports": {"apiserver": 1},
        "etcd_data_dir": str(tmp_path / "etcd"),
        "pids": {"etcd": gone.pid, "kube-apiserver": gone.pid},
    }
    (tmp_path / STATE_FILE).write_text(json.dumps(state))
    result = subprocess.run(
        [sys.executable, "-m", "hack.localcluster", "--state-dir", str(tmp_path), "status"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stdout.strip() == (f"local cluster in {tmp_path}: stopped (start it with `up`)")
    assert "not ready" not in result.stdout
