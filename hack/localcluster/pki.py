"""A throwaway certificate authority and kubeconfigs for one local cluster.

Every component authenticates with client certificates signed by one CA per cluster, the way
kubeadm does; there are no tokens to leak and no external issuer to reach.
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

_VALIDITY = dt.timedelta(days=365)


def _write(path: Path, data: bytes, private: bool = False) -> None:
    """Write atomically so a half-written key is never picked up by a starting process."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    if private:
        tmp.chmod(0o600)
    tmp.replace(path)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


@dataclass(frozen=True)
class KeyPair:
    cert: Path
    key: Path

    def cert_pem(self) -> bytes:
        return self.cert.read_bytes()

    def key_pem(self) -> bytes:
        return self.key.read_bytes()


class CertificateAuthority:
    """The cluster CA; its key stays in the state directory so tests can mint identities."""

    def __init__(self, directory: Path, name: str = "ca") -> None:
        self.directory = directory
        self.pair = KeyPair(directory / f"{name}.crt", directory / f"{name}.key")

    @classmethod
    def create(cls, directory: Path, name: str = "ca") -> CertificateAuthority:
        directory.mkdir(parents=True, exist_ok=True)
        ca = cls(directory, name)
        key = ec.generate_private_key(ec.SECP256R1())
        common_name = f"taugrid-localcluster-{name}"
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
        now = dt.datetime.now(dt.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(key, hashes.SHA256())
        )
        _write(ca.pair.key, _key_pem(key), private=True)
        _write(ca.pair.cert, cert.public_bytes(serialization.Encoding.PEM))
        return ca

    def issue(
        self,
        name: str,
        common_name: str,
        organizations: tuple[str, ...] = (),
        hosts: tuple[str, ...] = (),
    ) -> KeyPair:
        """Sign a leaf: a server certificate when ``hosts`` is given, else a client one."""
        ca_key = serialization.load_pem_private_key(self.pair.key_pem(), password=None)
        ca_cert = x509.load_pem_x509_certificate(self.pair.cert_pem())
        key = ec.generate_private_key(ec.SECP256R1())
        subject = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
        subject.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
        now = dt.datetime.now(dt.UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name(subject))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        )
        if hosts:
            sans: list[x509.GeneralName] = []
            for host in hosts:
                try:
                    sans.append(x509.IPAddress(ipaddress.ip_address(host)))
                except ValueError:
                    sans.append(x509.DNSName(host))
            builder = builder.add_extension(
                x509.SubjectAlternativeName(sans), critical=False
            ).add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
            )
        else:
            builder = builder.add_extension(
                x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
            )
        cert = builder.sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
        pair = KeyPair(self.directory / f"{name}.crt", self.directory / f"{name}.key")
        _write(pair.key, _key_pem(key), private=True)
        _write(pair.cert, cert.public_bytes(serialization.Encoding.PEM))
        return pair


def write_service_account_keys(private: Path, public: Path) -> None:
    """The key pair the apiserver signs ServiceAccount tokens with and verifies them by."""
    key = ec.generate_private_key(ec.SECP256R1())
    _write(private, _key_pem(key), private=True)
    _write(
        public,
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ),
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def write_kubeconfig(
    path: Path,
    server: str,
    ca: CertificateAuthority,
    user: KeyPair,
    user_name: str,
    context: str = "",
) -> Path:
    """A self-contained kubeconfig (certificates embedded), safe to copy elsewhere; its one
    context is ``context`` (default ``USER@taugrid-local``)."""
    context = context or f"{user_name}@taugrid-local"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "taugrid-local",
                "cluster": {
                    "server": server,
                    "certificate-authority-data": _b64(ca.pair.cert_pem()),
                },
            }
        ],
        "users": [
            {
                "name": user_name,
                "user": {
                    "client-certificate-data": _b64(user.cert_pem()),
                    "client-key-data": _b64(user.key_pem()),
                },
            }
        ],
        "contexts": [
            {
                "name": context,
                "context": {"cluster": "taugrid-local", "user": user_name},
            }
        ],
        "current-context": context,
    }
    _write(path, yaml.safe_dump(config, sort_keys=False).encode(), private=True)
    os.chmod(path, 0o600)
    return path
