"""`python -m hack.localcluster kubeconfig`: the kubeconfig a platform hands a researcher."""

from __future__ import annotations

import base64
import json
import stat
import subprocess
import sys
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from hack.localcluster.cluster import STATE_FILE
from hack.localcluster.pki import CertificateAuthority

ROOT = Path(__file__).resolve().parents[3]


def mint(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hack.localcluster", "--state-dir", str(state), "kubeconfig", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_kubeconfig_authenticates_as_the_user_in_its_groups_under_the_named_context(
    tmp_path: Path,
) -> None:
    state = tmp_path / "cluster"
    ca = CertificateAuthority.create(state / "pki")
    ports = {"apiserver": 6443}
    (state / STATE_FILE).write_text(
        json.dumps({"bin_dir": "", "ports": ports, "etcd_data_dir": ""})
    )
    out = tmp_path / "handoff" / "researcher.kubeconfig"
    out.parent.mkdir()

    done = mint(
        state, "alice@example.com", "--group", "ml", "--context", "research", "-o", str(out)
    )

    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600  # it holds a private key
    config = yaml.safe_load(out.read_text())
    assert config["current-context"] == "research"
    [context] = config["contexts"]
    assert context["name"] == "research"
    [cluster] = config["clusters"]
    assert cluster["cluster"]["server"] == "https://127.0.0.1:6443"
    [user] = config["users"]
    cert = x509.load_pem_x509_certificate(base64.b64decode(user["user"]["client-certificate-data"]))
    subject = cert.subject
    assert subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "alice@example.com"
    assert [a.value for a in subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == ["ml"]
    assert cert.issuer == x509.load_pem_x509_certificate(ca.pair.cert_pem()).subject
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.CLIENT_AUTH]
    # The CA's key never leaves the state directory.
    assert ca.pair.key_pem().decode() not in out.read_text()
    assert "written to" in done.stderr and done.stdout == ""


def test_without_a_cluster_it_says_to_start_one(tmp_path: Path) -> None:
    done = mint(tmp_path, "alice", "-o", str(tmp_path / "k"))
    assert done.returncode == 1
    expected = f"localcluster: no local cluster state in {tmp_path} (run `up` first)"
    assert done.stderr.strip() == expected
    assert not (tmp_path / "k").exists()
