"""Lease validation: upstream's ``ValidateLease``/``ValidateLeaseSpec``.

Upstream: ``pkg/apis/coordination/validation/validation.go`` (the same spec rules on
create and update, ``NameIsDNSSubdomain`` names) and ``ValidateCoordinatedLeaseStrategy``.
"""

from __future__ import annotations

import pytest

from kubeprio.api import kinds, validation
from kubeprio.api.coordination import Lease, LeaseSpec
from kubeprio.api.meta import ObjectMeta

INFO = kinds.for_model(Lease)


def lease(name: str = "node-1", **spec: object) -> Lease:
    return Lease(
        metadata=ObjectMeta(name=name, namespace="kube-node-lease"),
        spec=LeaseSpec(**spec),  # type: ignore[arg-type]
    )


def messages(obj: Lease) -> list[str]:
    return [str(error) for error in validation.validate_create(obj, INFO)]


@pytest.mark.parametrize(
    "obj",
    [
        lease(),
        Lease(metadata=ObjectMeta(name="empty", namespace="default")),
        lease(holder_identity="node-1", lease_duration_seconds=40, lease_transitions=0),
        lease(renew_time="2026-11-21T10:00:00.123456Z", acquire_time="2026-11-21T09:00:00Z"),
        lease(strategy="OldestEmulationVersion", preferred_holder="kcm-2"),
        lease(strategy="example.com/my-strategy"),
        lease("kube-scheduler.example"),
    ],
    ids=[
        "bare",
        "no spec",
        "kubelet lease",
        "times",
        "coordinated with preferred holder",
        "custom prefixed strategy",
        "subdomain name",
    ],
)
def test_valid_leases(obj):
    assert messages(obj) == []


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            lease(lease_duration_seconds=0),
            ["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"],
        ),
        (
            lease(lease_duration_seconds=-40),
            ["spec.leaseDurationSeconds: Invalid value: -40: must be greater than 0"],
        ),
        (
            lease(lease_transitions=-1),
            ["spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"],
        ),
        (
            lease(strategy="Newest"),
            [
                'spec.strategy: Unsupported value: "Newest": supported values: "OldestEmulationVersion"'
            ],
        ),
        (
            lease(strategy="bad prefix/x"),
            [
                'spec.strategy: Invalid value: "bad prefix/x": prefix part a lowercase RFC 1123 '
                "subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'example.com', regex "
                "used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ],
        ),
        (
            lease(preferred_holder="kcm-2"),
            ["spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined"],
        ),
        (
            lease("Node_1"),
            [
                'metadata.name: Invalid value: "Node_1": a lowercase RFC 1123 subdomain must '
                "consist of lower case alphanumeric characters, '-' or '.', and must start and "
                "end with an alphanumeric character (e.g. 'example.com', regex used for "
                "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ],
        ),
    ],
    ids=[
        "zero duration",
        "negative duration",
        "negative transitions",
        "unknown strategy",
        "strategy prefix not a subdomain",
        "preferred holder without strategy",
        "name not a subdomain",
    ],
)
def test_invalid_leases(obj, expected):
    assert messages(obj) == expected


def test_updates_run_the_same_spec_rules():
    old = lease(lease_duration_seconds=40)
    new = lease(lease_duration_seconds=0)
    assert [str(e) for e in validation.validate_update(new, old, INFO)] == [
        "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"
    ]
