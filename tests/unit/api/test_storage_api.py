"""PersistentVolumes, claims and StorageClasses through the API service: upstream v1.32
defaults (``pkg/apis/core/v1/defaults.go``, ``pkg/apis/storage/v1/defaults.go``),
validation texts (``pkg/apis/core/validation/validation.go``
``ValidatePersistentVolume``/``...Claim``/``...ClaimUpdate``,
``pkg/apis/storage/validation/validation.go``), strategies and Table cells
(``pkg/printers/internalversion/printers.go``)."""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import serialization
from kubeprio.api.errors import InvalidError
from kubeprio.api.model import evolve
from kubeprio.api.persistentvolume import (
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimStatus,
    PersistentVolumeStatus,
)
from kubeprio.api.storageclass import StorageClass
from kubeprio.apiserver import storagetables
from kubeprio.apiserver.service import ApiService
from kubeprio.clock import parse_rfc3339


def pv(**spec: Any) -> PersistentVolume:
    body = {
        "capacity": {"storage": "1Gi"},
        "accessModes": ["ReadWriteOnce"],
        "hostPath": {"path": "/data"},
        **spec,
    }
    return serialization.from_dict(PersistentVolume, {"metadata": {"name": "pv0"}, "spec": body})


def pvc(**spec: Any) -> PersistentVolumeClaim:
    body = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, **spec}
    return serialization.from_dict(
        PersistentVolumeClaim, {"metadata": {"name": "data", "namespace": "default"}, "spec": body}
    )


def sc(**fields: Any) -> StorageClass:
    return serialization.from_dict(
        StorageClass, {"metadata": {"name": "fast"}, "provisioner": "example.com/p", **fields}
    )


def causes(exc: InvalidError) -> list[str]:
    details = exc.status.details
    assert details is not None
    return [f"{c.field}: {c.message}" for c in details.causes or ()]


def test_volume_defaults_and_initial_status(api: ApiService) -> None:
    """SetDefaults_PersistentVolume; the strategy stamps lastPhaseTransitionTime."""
    created = api.create(pv())
    data = serialization.to_dict(created)
    assert data["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert data["spec"]["volumeMode"] == "Filesystem"
    assert data["spec"]["hostPath"] == {"path": "/data", "type": ""}
    assert data["status"]["phase"] == "Pending"
    assert data["status"]["lastPhaseTransitionTime"] == created.metadata.creation_timestamp


def test_claim_defaults_and_status_reset(api: ApiService) -> None:
    claim = evolve(pvc(), status=PersistentVolumeClaimStatus(phase="Bound"))
    created = api.create(claim)
    assert created.status == PersistentVolumeClaimStatus(phase="Pending")
    assert created.spec is not None
    assert created.spec.volume_mode == "Filesystem"


def test_claim_data_source_is_mirrored(api: ApiService) -> None:
    """NormalizeDataSources: dataSource alone gets the same dataSourceRef."""
    created = api.create(pvc(dataSource={"kind": "PersistentVolumeClaim", "name": "src"}))
    assert created.spec is not None
    assert created.spec.data_source_ref is not None
    assert created.spec.data_source_ref.name == "src"


def test_storage_class_defaults(api: ApiService) -> None:
    created = api.create(sc())
    assert (created.reclaim_policy, created.volume_binding_mode) == ("Delete", "Immediate")


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (pv(accessModes=[]), ["spec.accessModes: Required value"]),
        (
            pv(accessModes=["ReadWriteOncePod", "ReadWriteOnce"]),
            ["spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"],
        ),
        (
            pv(accessModes=["Sometimes"]),
            [
                'spec.accessModes: Unsupported value: "Sometimes": supported values: '
                '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'
            ],
        ),
        (
            pv(capacity={"storage": "0"}),
            ['spec.capacity[storage]: Invalid value: "0": must be greater than zero'],
        ),
        (
            pv(nfs={"server": "s", "path": "/"}),
            ["spec.nfs: Forbidden: may not specify more than 1 volume type"],
        ),
        (
            pv(hostPath=None, local={"path": "/mnt"}),
            ["spec.nodeAffinity: Required value: Local volume requires node affinity"],
        ),
        (pv(hostPath=None), ["spec: Required value: must specify a volume type"]),
        (
            pv(persistentVolumeReclaimPolicy="Keep"),
            [
                'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported '
                'values: "Delete", "Recycle", "Retain"'
            ],
        ),
        (
            pvc(accessModes=[]),
            ["spec.accessModes: Required value: at least 1 access mode is required"],
        ),
        (pvc(resources={}), ["spec.resources[storage]: Required value"]),
        (
            pvc(storageClassName="Bad_Name"),
            [
                'spec.storageClassName: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain '
                "must consist of lower case alphanumeric characters, '-' or '.', and must start "
                "and end with an alphanumeric character (e.g. 'example.com', regex used for "
                "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ],
        ),
        (
            pvc(dataSource={"kind": "Snap", "name": "s"}),
            [
                'spec.dataSource: Invalid value: "Snap"',
                'spec.dataSourceRef: Invalid value: "Snap"',
            ],
        ),
        (sc(provisioner=""), ["provisioner: Required value"]),
        (
            sc(reclaimPolicy="Recycle"),
            ['reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"'],
        ),
        (
            sc(volumeBindingMode="Later"),
            [
                'volumeBindingMode: Unsupported value: "Later": supported values: '
                '"Immediate", "WaitForFirstConsumer"'
            ],
        ),
        (
            sc(allowedTopologies=[{"matchLabelExpressions": [{"key": "zone", "values": []}]}]),
            [
                "allowedTopologies[0].matchLabelExpressions[0].values: Required value: must "
                "specify as least one value"
            ],
        ),
    ],
    ids=[
        "pv-no-access-modes",
        "pv-rwop-with-others",
        "pv-unknown-mode",
        "pv-zero-capacity",
        "pv-two-sources",
        "pv-local-needs-affinity",
        "pv-no-source",
        "pv-bad-reclaim",
        "pvc-no-access-modes",
        "pvc-no-storage",
        "pvc-bad-class",
        "pvc-data-source-without-group",
        "sc-no-provisioner",
        "sc-recycle",
        "sc-bad-binding-mode",
        "sc-topology-without-values",
    ],
)
def test_create_is_refused_with_upstreams_causes(
    api: ApiService, obj: Any, expected: list[str]
) -> None:
    with pytest.raises(InvalidError) as raised:
        api.create(obj)
    assert causes(raised.value) == expected


def test_claim_spec_is_immutable_but_a_bound_claim_may_grow(api: ApiService) -> None:
    """ValidatePersistentVolumeClaimUpdate: volumeName once; storage of a bound claim."""
    created = api.create(pvc())
    assert created.spec is not None
    bound = api.update(evolve(created, spec=evolve(created.spec, volume_name="pv0")))
    bound = api.update_status(evolve(bound, status=PersistentVolumeClaimStatus(phase="Bound")))
    assert bound.spec is not None
    with pytest.raises(InvalidError) as raised:
        api.update(evolve(bound, spec=evolve(bound.spec, access_modes=("ReadWriteMany",))))
    [message] = causes(raised.value)
    assert message.startswith(
        "spec: Forbidden: spec is immutable after creation except resources.requests and "
        "volumeAttributesClassName for bound claims\n"
    )
    grown = serialization.from_dict(
        PersistentVolumeClaim,
        {
            **serialization.to_dict(bound),
            "spec": {
                **serialization.to_dict(bound)["spec"],
                "resources": {"requests": {"storage": "2Gi"}},
            },
        },
    )
    assert api.update(grown).spec is not None
    shrunk = serialization.from_dict(
        PersistentVolumeClaim,
        {
            **serialization.to_dict(grown),
            "metadata": serialization.to_dict(api.get(PersistentVolumeClaim, "data", "default"))[
                "metadata"
            ],
            "spec": {
                **serialization.to_dict(grown)["spec"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
    )
    with pytest.raises(InvalidError) as raised:
        api.update(shrunk)
    assert (
        "spec.resources.requests.storage: Forbidden: field can not be less than previous value"
        in causes(raised.value)
    )


def test_storage_class_update_rules(api: ApiService) -> None:
    created = api.create(sc())
    with pytest.raises(InvalidError) as raised:
        api.update(evolve(created, provisioner="other.com/p", reclaim_policy="Retain"))
    assert causes(raised.value) == [
        "provisioner: Forbidden: updates to provisioner are forbidden.",
        "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
    ]


def test_volume_status_update_stamps_the_phase_transition(api: ApiService, clock: Any) -> None:
    created = api.create(pv())
    clock.advance(60)
    updated = api.update_status(evolve(created, status=PersistentVolumeStatus(phase="Available")))
    assert updated.status is not None
    assert updated.status.last_phase_transition_time != created.metadata.creation_timestamp


NOW = parse_rfc3339("2026-01-01T01:00:00Z")


def test_volume_row() -> None:
    volume = serialization.from_dict(
        PersistentVolume,
        {
            "metadata": {"name": "pv0", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {
                "capacity": {"storage": "5Gi"},
                "accessModes": ["ReadWriteMany", "ReadWriteOnce"],
                "claimRef": {"namespace": "ns", "name": "data"},
                "persistentVolumeReclaimPolicy": "Delete",
                "storageClassName": "fast",
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Bound"},
        },
    )
    cells, _ = storagetables.print_persistent_volume(volume, NOW)
    assert cells == [
        "pv0",
        "5Gi",
        "RWO,RWX",
        "Delete",
        "Bound",
        "ns/data",
        "fast",
        "<unset>",
        "",
        "60m",
        "Filesystem",
    ]


@pytest.mark.parametrize(
    ("volume_name", "expected"),
    [
        ("", ["data", "Pending", "", "", "", "fast", "<unset>", "60m", "<unset>"]),
        ("pv0", ["data", "Pending", "pv0", "5Gi", "RWO", "fast", "<unset>", "60m", "<unset>"]),
    ],
    ids=["unbound", "named-volume"],
)
def test_claim_row(volume_name: str, expected: list[str]) -> None:
    claim = serialization.from_dict(
        PersistentVolumeClaim,
        {
            "metadata": {"name": "data", "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {
                "storageClassName": "fast",
                "volumeName": volume_name,
                "resources": {"requests": {"storage": "1Gi"}},
            },
            "status": {
                "phase": "Pending",
                "capacity": {"storage": "5Gi"},
                "accessModes": ["ReadWriteOnce"],
            },
        },
    )
    cells, _ = storagetables.print_persistent_volume_claim(claim, NOW)
    assert cells == expected


def test_default_class_row() -> None:
    storage_class = serialization.from_dict(
        StorageClass,
        {
            "metadata": {
                "name": "standard",
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
            },
            "provisioner": "rancher.io/local-path",
        },
    )
    cells, _ = storagetables.print_storage_class(storage_class, NOW)
    assert cells == [
        "standard (default)",
        "rancher.io/local-path",
        "Delete",
        "Immediate",
        False,
        "60m",
    ]
