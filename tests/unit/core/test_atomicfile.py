"""tau.atomicfile: a reader sees the old file or the new one, with the requested mode."""

import stat

import pytest

from tau import atomicfile


def mode_of(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_text_replaces_the_file_with_the_requested_mode(tmp_path):
    target = tmp_path / "values.yaml"
    target.write_text("old\n")
    atomicfile.write_text(target, "new ✓\n")
    assert target.read_text(encoding="utf-8") == "new ✓\n"
    assert mode_of(target) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["values.yaml"]


def test_private_bytes_are_0600(tmp_path):
    target = tmp_path / "kubeconfig.yaml"
    atomicfile.write_bytes(target, b"token: x\n", mode=0o600)
    assert target.read_bytes() == b"token: x\n"
    assert mode_of(target) == 0o600


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "pin.json"
    target.write_text("{}\n")
    with pytest.raises(RuntimeError), atomicfile.atomic_open(target) as handle:
        handle.write(b"half")
        raise RuntimeError("crash mid-write")
    assert target.read_text() == "{}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["pin.json"]
