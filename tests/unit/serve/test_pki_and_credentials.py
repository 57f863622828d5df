"""Certificates, the token file and the kubeconfig of ``kubeprio serve``."""

from __future__ import annotations

import base64
import ipaddress

import pytest
import yaml
from cryptography import x509

from kubeprio.apiserver.authn import parse_token_file
from kubeprio.serve import credentials, pki

NOW = 1_767_225_600.0


def _sans(path) -> set[str]:
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return {str(ip) for ip in san.get_values_for_type(x509.IPAddress)} | set(
        san.get_values_for_type(x509.DNSName)
    )


@pytest.mark.parametrize(
    ("host", "names"),
    [
        ("127.0.0.1", {"localhost", "127.0.0.1"}),
        ("0.0.0.0", {"localhost", "127.0.0.1"}),
        ("10.1.2.3", {"localhost", "127.0.0.1", "10.1.2.3"}),
        ("kubeprio.example", {"localhost", "127.0.0.1", "kubeprio.example"}),
    ],
    ids=["loopback", "wildcard", "address", "name"],
)
def test_the_serving_certificate_names_localhost_and_the_host(tmp_path, host, names):
    paths = pki.ensure_pki(tmp_path, host=host, now=NOW)
    assert _sans(paths.cert) == names
    ca = x509.load_pem_x509_certificate(paths.ca_cert.read_bytes())
    cert = x509.load_pem_x509_certificate(paths.cert.read_bytes())
    cert.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert paths.key.stat().st_mode & 0o777 == 0o600
    assert paths.ca_key.stat().st_mode & 0o777 == 0o600


def test_a_restart_reuses_the_certificates(tmp_path):
    first = pki.ensure_pki(tmp_path, host="127.0.0.1", now=NOW)
    files = {p: p.read_bytes() for p in (first.ca_cert, first.ca_key, first.cert, first.key)}
    pki.ensure_pki(tmp_path, host="127.0.0.1", now=NOW + 86400)
    assert {p: p.read_bytes() for p in files} == files


@pytest.mark.parametrize(
    ("host", "later"),
    [("10.9.9.9", 0.0), ("127.0.0.1", 365 * 86400.0)],
    ids=["new-host", "expiring"],
)
def test_the_serving_certificate_is_reissued_by_the_same_ca(tmp_path, host, later):
    first = pki.ensure_pki(tmp_path, host="127.0.0.1", now=NOW)
    ca, cert = first.ca_cert.read_bytes(), first.cert.read_bytes()
    pki.ensure_pki(tmp_path, host=host, now=NOW + later)
    assert first.ca_cert.read_bytes() == ca
    assert first.cert.read_bytes() != cert
    new = x509.load_pem_x509_certificate(first.cert.read_bytes())
    new.verify_directly_issued_by(x509.load_pem_x509_certificate(ca))
    if host != "127.0.0.1":
        assert ipaddress.ip_address(host) in {
            ip
            for ip in new.extensions.get_extension_for_class(
                x509.SubjectAlternativeName
            ).value.get_values_for_type(x509.IPAddress)
        }


def test_the_token_file_gets_an_admin_and_the_preset_users(tmp_path):
    path = tmp_path / "tokens.csv"
    records = credentials.ensure_tokens(path, users=["alice"])
    assert [(r.user, r.groups) for r in records] == [
        ("admin", ("system:masters",)),
        ("alice", ()),
    ]
    assert parse_token_file(path.read_text()) == records
    assert path.stat().st_mode & 0o777 == 0o600
    assert credentials.ensure_tokens(path, users=["alice"]) == records
    more = credentials.ensure_tokens(path, users=["alice", "bob"])
    assert more[:2] == records
    assert [r.user for r in more] == ["admin", "alice", "bob"]


def test_a_users_own_token_file_is_kept(tmp_path):
    path = tmp_path / "tokens.csv"
    path.write_text('root-token,root,1,"system:masters,ops"\n')
    records = credentials.ensure_tokens(path)
    assert path.read_text() == 'root-token,root,1,"system:masters,ops"\n'
    assert credentials.admin_record(records).user == "root"


def test_the_kubeconfig_has_the_ca_and_a_context_per_user(tmp_path):
    records = credentials.ensure_tokens(tmp_path / "tokens.csv", users=["alice"])
    path = tmp_path / "kubeconfig"
    credentials.write_kubeconfig(
        path, server="https://127.0.0.1:6443", ca_pem=b"PEM", records=records
    )
    config = yaml.safe_load(path.read_text())
    assert config["current-context"] == "kubeprio"
    assert config["clusters"] == [
        {
            "name": "kubeprio",
            "cluster": {
                "server": "https://127.0.0.1:6443",
                "certificate-authority-data": base64.b64encode(b"PEM").decode(),
            },
        }
    ]
    assert config["contexts"] == [
        {"name": "kubeprio", "context": {"cluster": "kubeprio", "user": "admin"}},
        {"name": "kubeprio-alice", "context": {"cluster": "kubeprio", "user": "alice"}},
    ]
    assert [u["user"]["token"] for u in config["users"]] == [r.token for r in records]
    assert path.stat().st_mode & 0o777 == 0o600
