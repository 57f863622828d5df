"""CertificateSigningRequests through the API service: strategies, admission, Table.

Upstream: ``pkg/registry/certificates/certificates/strategy.go`` (``PrepareForCreate``
records the requester and empties the status; the main update keeps spec and status;
``csrStatusStrategy`` keeps stored Approved/Denied conditions; ``csrApprovalStrategy``
changes only the conditions; ``populateConditionTimestamps``),
``plugin/pkg/admission/certificates/{approval,signing,subjectrestriction}`` and
``printCertificateSigningRequest``/``extractCSRStatus`` of the printers.
"""

from __future__ import annotations

import datetime as dt
import random

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kubeprio.admission.chain import UserInfo
from kubeprio.admission.defaults import default_chain
from kubeprio.api import errors
from kubeprio.api.certificates import (
    CertificateSigningRequest,
    CertificateSigningRequestCondition,
    CertificateSigningRequestSpec,
    CertificateSigningRequestStatus,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.apiserver.certificatetables import csr_condition, print_csr
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock

SIGNER = "example.com/signer"
ALICE = UserInfo("alice", ("devs", "system:authenticated"), "uid-1", (("scopes", ("a",)),))


def _request(*organizations: str) -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = [x509.NameAttribute(NameOID.COMMON_NAME, "x")]
    subject += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    built = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(subject))
    return built.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def _certificate() -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "x")])
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    built = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(7)
        .not_valid_before(start)
        .not_valid_after(start + dt.timedelta(days=1))
    )
    return built.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def _csr(name: str = "req", signer: str = SIGNER, request: bytes | None = None):  # type: ignore[no-untyped-def]
    return CertificateSigningRequest(
        metadata=ObjectMeta(name=name),
        spec=CertificateSigningRequestSpec(
            request=request or _request(),
            signer_name=signer,
            usages=("client auth",),
            username="mallory",
            groups=("system:masters",),
        ),
        status=CertificateSigningRequestStatus(
            conditions=(CertificateSigningRequestCondition(type="Approved", status="True"),)
        ),
    )


def _api(granted: set[tuple[str, str, str]] | None = None) -> ApiService:
    api = ApiService(MemoryStore(), clock=ManualClock(), rng=random.Random(1))
    if granted is not None:
        api.admission = default_chain(
            api.listers,
            authorize_signer=lambda user, verb, name: (user.name, verb, name) in granted,
        )
    return api


def _approved(csr: CertificateSigningRequest) -> CertificateSigningRequest:
    condition = CertificateSigningRequestCondition(type="Approved", status="True", reason="R")
    return evolve(csr, status=CertificateSigningRequestStatus(conditions=(condition,)))


def test_create_records_the_requester_and_empties_the_status():
    stored = _api().create_object(_csr(), user=ALICE).obj
    spec = stored.spec
    assert (spec.username, spec.uid, spec.groups) == (
        "alice",
        "uid-1",
        ("devs", "system:authenticated"),
    )
    assert spec.user_extra == {"scopes": ("a",)}
    assert stored.status == CertificateSigningRequestStatus()


def test_main_update_keeps_spec_and_status():
    api = _api()
    stored = api.create_object(_csr()).obj
    changed = evolve(
        _approved(stored),
        metadata=evolve(stored.metadata, labels={"team": "a"}),
        spec=evolve(stored.spec, signer_name="other.io/x"),
    )
    updated = api.update_object(changed).obj
    assert updated.metadata.labels == {"team": "a"}
    assert updated.spec == stored.spec
    assert updated.status == stored.status


def test_approval_changes_only_conditions_and_stamps_them():
    api = _api()
    stored = api.create_object(_csr()).obj
    sent = evolve(_approved(stored), spec=evolve(stored.spec, usages=("server auth",)))
    updated = api.update_object(sent, subresource="approval").obj
    assert updated.spec == stored.spec
    (condition,) = updated.status.conditions
    assert condition.last_update_time == condition.last_transition_time == "2026-01-01T00:00:00Z"


def test_status_keeps_stored_decisions():
    api = _api()
    stored = api.update_object(_approved(api.create_object(_csr()).obj), subresource="approval").obj
    (decision,) = stored.status.conditions
    rewritten = evolve(decision, reason="Other", message="changed")
    sent = evolve(stored, status=evolve(stored.status, conditions=(rewritten,)))
    updated = api.update_object(sent, subresource="status").obj
    assert updated.status.conditions == (decision,)


@pytest.mark.parametrize(
    ("granted", "allowed"),
    [
        (set(), False),
        ({("alice", "approve", SIGNER)}, True),
        ({("alice", "approve", "example.com/*")}, True),
        ({("alice", "sign", SIGNER)}, False),
    ],
)
def test_approval_needs_approve_on_the_signer(granted, allowed):
    # IsAuthorizedForSignerName: the exact name, then <domain>/*.
    api = _api(granted)
    stored = api.create_object(_csr()).obj
    if allowed:
        api.update_object(_approved(stored), subresource="approval", user=ALICE)
        return
    with pytest.raises(errors.ForbiddenError) as refused:
        api.update_object(_approved(stored), subresource="approval", user=ALICE)
    assert str(refused.value) == (
        'certificatesigningrequests.certificates.k8s.io "req" is forbidden: user not '
        f'permitted to approve requests with signerName "{SIGNER}"'
    )


def test_setting_the_certificate_needs_sign_on_the_signer():
    api = _api(set())
    stored = api.create_object(_csr()).obj
    sent = evolve(stored, status=CertificateSigningRequestStatus(certificate=_certificate()))
    with pytest.raises(errors.ForbiddenError) as refused:
        api.update_object(sent, subresource="status", user=ALICE)
    assert str(refused.value).endswith(
        f'user not permitted to sign requests with signerName "{SIGNER}"'
    )


def test_system_masters_client_certificates_are_refused():
    with pytest.raises(errors.ForbiddenError) as refused:
        _api(set()).create_object(
            _csr(signer="kubernetes.io/kube-apiserver-client", request=_request("system:masters")),
            user=ALICE,
        )
    assert str(refused.value) == (
        'certificatesigningrequests.certificates.k8s.io "req" is forbidden: use of '
        "kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    )


@pytest.mark.parametrize(
    ("types", "certificate", "expected"),
    [
        ((), None, "Pending"),
        (("Approved",), None, "Approved"),
        (("Approved", "Denied"), None, "Denied"),
        (("Approved", "Failed"), None, "Approved,Failed"),
        (("Approved",), b"pem", "Approved,Issued"),
        (("Failed",), b"pem", "Pending,Failed,Issued"),
    ],
)
def test_condition_column(types, certificate, expected):
    conditions = tuple(CertificateSigningRequestCondition(type=t, status="True") for t in types)
    obj = evolve(
        _csr(),
        status=CertificateSigningRequestStatus(conditions=conditions, certificate=certificate),
    )
    assert csr_condition(obj) == expected


def test_row_cells():
    obj = evolve(_csr(), metadata=ObjectMeta(name="r", creation_timestamp="2026-01-01T00:00:00Z"))
    cells, _ = print_csr(obj, 1767225600.0 + 90)
    assert cells == ["r", "90s", SIGNER, "mallory", "<none>", "Approved"]
    timed = evolve(obj, spec=evolve(obj.spec, signer_name="", expiration_seconds=3600))
    assert print_csr(timed, 1767225600.0)[0][2:5] == ["<none>", "mallory", "60m"]
