"""A department's TLS for a Dask cluster, written to files as an administrator would: a CA, and a certificate
with its key for the scheduler, the workers and the TA's client, each signed by that CA (``cryptography``)."""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

ROLES = ("scheduler", "worker", "client")


@dataclass(frozen=True)
class Pair:
    """One role's certificate and private key, as PEM files."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class Authority:
    """A CA's certificate file and a signed pair per role."""

    ca_file: Path
    pairs: dict[str, Pair]


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "attn-ref tests"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_private(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    os.chmod(path, 0o600)
    return path


def _key_pem(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _builder(subject: str, issuer: x509.Name, public_key) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.timezone.utc)
    return (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(issuer).public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1)))


def write_authority(folder: Path, name: str) -> Authority:
    """A CA called ``name`` and one pair per role it signs, written under ``folder`` (keys owner-only)."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name(f"{name} CA")
    ca_cert = (_builder(f"{name} CA", ca_name, ca_key.public_key())
               .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                            content_commitment=False, key_encipherment=False, data_encipherment=False,
                                            key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
               .sign(ca_key, hashes.SHA256()))
    ca_file = folder / "ca.pem"
    ca_file.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    pairs = {}
    for role in ROLES:
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (_builder(f"{name} {role}", ca_name, key.public_key())
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                            x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                               critical=False)
                .sign(ca_key, hashes.SHA256()))
        cert_path = folder / f"{role}.pem"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        pairs[role] = Pair(cert_path, _write_private(folder / f"{role}-key.pem", _key_pem(key)))
    return Authority(ca_file, pairs)
