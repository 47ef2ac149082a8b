"""`run.working_dir` packing: deterministic, trimmed, bounded, and unpacked for real in a pod."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tau import keys
from tau.errors import ValidationError
from tau.render.payload import PROJECT_DECODER
from tau.resolve.project import MAX_ARCHIVE_BYTES, package


def project(tmp_path: Path) -> Path:
    root = tmp_path / "study"
    (root / "models").mkdir(parents=True)
    (root / "train.py").write_text(
        "from helpers import loss\nfrom models.net import NAME\nprint(NAME, loss(2))\n"
    )
    (root / "helpers.py").write_text("def loss(x):\n    return 1 / x\n")
    (root / "models" / "net.py").write_text("NAME = 'net'\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "models" / "__pycache__").mkdir()
    (root / "models" / "__pycache__" / "net.cpython-312.pyc").write_bytes(b"\0" * 10)
    (root / "data.csv").write_text("a,b\n")
    return root


def names(archive: bytes) -> list[str]:
    return zipfile.ZipFile(io.BytesIO(archive)).namelist()


def test_the_archive_is_the_same_bytes_for_the_same_tree(tmp_path: Path) -> None:
    root = project(tmp_path)
    first = package(tmp_path, "study", "study/train.py")
    os.utime(root / "helpers.py", (1, 1))
    second = package(tmp_path, "study", "study/train.py")
    assert first.archive == second.archive
    assert first.entrypoint == "train.py"
    (root / "helpers.py").write_text("def loss(x):\n    return 2 / x\n")
    assert package(tmp_path, "study", "study/train.py").archive != first.archive


def test_clutter_and_configured_excludes_stay_behind(tmp_path: Path) -> None:
    project(tmp_path)
    packed = package(tmp_path, "study", "study/train.py", ["*.csv"])
    assert names(packed.archive) == [
        "project/helpers.py",
        "project/models/net.py",
        "project/train.py",
    ]


def test_an_oversized_project_is_one_line_naming_the_field(tmp_path: Path) -> None:
    root = project(tmp_path)
    (root / "weights.bin").write_bytes(os.urandom(MAX_ARCHIVE_BYTES + 1))
    with pytest.raises(ValidationError) as caught:
        package(tmp_path, "study", "study/train.py")
    line = caught.value.one_line()
    assert line.startswith("run.working_dir 'study' packs to ") and "\n" not in line
    assert "owner: researcher" in line


def test_a_symlink_out_of_the_project_is_refused(tmp_path: Path) -> None:
    root = project(tmp_path)
    (tmp_path / "secret.txt").write_text("no")
    (root / "leak.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(ValidationError, match=r"leak\.txt is a symlink leaving the project"):
        package(tmp_path, "study", "study/train.py")


def test_an_excluded_entrypoint_is_refused(tmp_path: Path) -> None:
    project(tmp_path)
    with pytest.raises(ValidationError, match=r"is not shipped with run\.working_dir"):
        package(tmp_path, "study", "study/train.py", ["train.py"])


def test_the_pod_unpacks_it_and_sibling_imports_work(tmp_path: Path) -> None:
    project(tmp_path)
    archive = package(tmp_path, "study", "study/train.py").archive
    target = tmp_path / "pod" / "tau-project"
    target.mkdir(parents=True)
    env = {
        **os.environ,
        keys.ENV_PAYLOAD_B64: base64.b64encode(archive).decode(),
        keys.ENV_PAYLOAD_DIGEST: hashlib.sha256(archive).hexdigest(),
        keys.ENV_PAYLOAD_TARGET_DIR: str(target),
    }
    subprocess.run([sys.executable, "-c", PROJECT_DECODER], env=env, check=True, timeout=60)
    run = subprocess.run(
        [sys.executable, "train.py"], cwd=target, capture_output=True, text=True, timeout=60
    )
    assert (run.returncode, run.stdout) == (0, "net 0.5\n")
    env[keys.ENV_PAYLOAD_DIGEST] = "0" * 64
    tampered = subprocess.run(
        [sys.executable, "-c", PROJECT_DECODER], env=env, capture_output=True, text=True
    )
    assert tampered.returncode == 1 and "digest mismatch" in tampered.stderr
