"""CSIDriver, CSINode and VolumeAttachment through the API service: upstream v1.32
defaults (``pkg/apis/storage/v1/defaults.go`` ``SetDefaults_CSIDriver``), validation texts
(``pkg/apis/storage/validation/validation.go`` ``ValidateCSIDriver``/``...Update``,
``ValidateCSINode``/``...Update``, ``ValidateVolumeAttachment``/``...V1``/``...Update``,
core ``ValidateCSIDriverName``), the VolumeAttachment strategy (status reset on create,
kept on update) and Table cells (``pkg/printers/internalversion/printers.go``)."""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import serialization
from kubeprio.api.csi import (
    CSIDriver,
    CSINode,
    VolumeAttachment,
    VolumeAttachmentStatus,
)
from kubeprio.api.errors import InvalidError
from kubeprio.api.model import evolve
from kubeprio.apiserver import csitables
from kubeprio.apiserver.service import ApiService
from kubeprio.clock import parse_rfc3339


def driver(**spec: Any) -> CSIDriver:
    return serialization.from_dict(
        CSIDriver, {"metadata": {"name": "ebs.csi.aws.com"}, "spec": spec}
    )


def csi_node(*drivers: dict[str, Any], name: str = "n1") -> CSINode:
    return serialization.from_dict(
        CSINode, {"metadata": {"name": name}, "spec": {"drivers": list(drivers)}}
    )


def node_driver(name: str = "ebs.csi.aws.com", **fields: Any) -> dict[str, Any]:
    return {"name": name, "nodeID": "i-123", **fields}


def attachment(**spec: Any) -> VolumeAttachment:
    body = {
        "attacher": "ebs.csi.aws.com",
        "nodeName": "n1",
        "source": {"persistentVolumeName": "pv1"},
        **spec,
    }
    return serialization.from_dict(
        VolumeAttachment, {"metadata": {"name": "csi-abc"}, "spec": body}
    )


def causes(exc: InvalidError) -> list[str]:
    details = exc.status.details
    assert details is not None
    return [f"{c.field}: {c.message}" for c in details.causes or ()]


def test_csi_driver_defaults(api: ApiService) -> None:
    """SetDefaults_CSIDriver with v1.32's gates (fsGroupPolicy and lifecycle modes GA,
    SELinuxMountReadWriteOncePod on)."""
    created = api.create(driver())
    assert serialization.to_dict(created)["spec"] == {
        "attachRequired": True,
        "podInfoOnMount": False,
        "volumeLifecycleModes": ["Persistent"],
        "storageCapacity": False,
        "fsGroupPolicy": "ReadWriteOnceWithFSType",
        "requiresRepublish": False,
        "seLinuxMount": False,
    }
    explicit = api.create(
        evolve(
            driver(attachRequired=False, volumeLifecycleModes=["Ephemeral"]),
            metadata=evolve(driver().metadata, name="inline.csi.example.com"),
        )
    )
    assert explicit.spec is not None
    assert explicit.spec.attach_required is False
    assert explicit.spec.volume_lifecycle_modes == ("Ephemeral",)


def test_volume_attachment_status_reset_on_create_and_kept_on_update(api: ApiService) -> None:
    """volumeAttachmentStrategy: PrepareForCreate resets the status (v1); main updates
    keep it; the status subresource writes it."""
    sent = evolve(attachment(), status=VolumeAttachmentStatus(attached=True))
    created = api.create(sent)
    assert serialization.to_dict(created)["status"] == {"attached": False}
    attached = api.update_status(evolve(created, status=VolumeAttachmentStatus(attached=True)))
    assert attached.status is not None
    assert attached.status.attached is True
    relabelled = api.update(
        evolve(attached, metadata=evolve(attached.metadata, labels={"a": "b"}), status=None)
    )
    assert relabelled.status is not None
    assert relabelled.status.attached is True


BAD_CREATES = [
    pytest.param(
        driver(fsGroupPolicy="Sometimes", volumeLifecycleModes=["Forever"]),
        [
            'spec.fsGroupPolicy: Unsupported value: "Sometimes": supported values: "File", '
            '"None", "ReadWriteOnceWithFSType"',
            'spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: '
            '"Persistent", "Ephemeral"',
        ],
        id="driver-enums",
    ),
    pytest.param(
        driver(
            tokenRequests=[
                {"audience": "a", "expirationSeconds": 60},
                {"audience": "a"},
                {"audience": "b", "expirationSeconds": 2**33},
            ]
        ),
        [
            "spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a "
            "duration less than 10 minutes",
            'spec.tokenRequests[1].audience: Duplicate value: "a"',
            "spec.tokenRequests[2].expirationSeconds: Invalid value: 8589934592: may not "
            "specify a duration larger than 2^32 seconds",
        ],
        id="driver-token-requests",
    ),
    pytest.param(
        csi_node(
            node_driver(allocatable={"count": -1}, topologyKeys=["zone", "zone", "bad key"]),
            node_driver(nodeID=""),
        ),
        [
            "spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or "
            "equal to 0",
            'spec.drivers[0]: Duplicate value: "zone"',
            'spec.drivers[0]: Invalid value: "bad key": name part must consist of '
            "alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
            "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            "spec.drivers[1].nodeID: Required value",
            'spec.drivers[1].name: Duplicate value: "ebs.csi.aws.com"',
        ],
        id="csinode-drivers",
    ),
    pytest.param(
        csi_node(node_driver(name="Bad_Driver", nodeID="x" * 257)),
        [
            'spec.drivers[0].name: Invalid value: "Bad_Driver": a lowercase RFC 1123 '
            "subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
            "must start and end with an alphanumeric character (e.g. 'example.com', regex "
            "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
            "[a-z0-9])?)*')",
            f'spec.drivers[0].nodeID: Invalid value: "{"x" * 257}": must be 256 characters or less',
        ],
        id="csinode-driver-name-and-long-node-id",
    ),
    pytest.param(
        attachment(attacher="", source={}, nodeName=""),
        [
            "spec.attacher: Required value",
            "spec.source: Required value: must specify exactly one of inlineVolumeSpec and "
            "persistentVolumeName",
            'spec.nodeName: Invalid value: "": a lowercase RFC 1123 subdomain must consist '
            "of lower case alphanumeric characters, '-' or '.', and must start and end with "
            "an alphanumeric character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            "spec.attacher: Required value",
            'spec.attacher: Invalid value: "": a lowercase RFC 1123 subdomain must consist '
            "of lower case alphanumeric characters, '-' or '.', and must start and end with "
            "an alphanumeric character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ],
        id="attachment-empty",
    ),
    pytest.param(
        attachment(source={"persistentVolumeName": ""}),
        [
            "spec.source.persistentVolumeName: Required value: must specify non empty "
            "persistentVolumeName",
            'spec.source.persistentVolumeName: Invalid value: "": a lowercase RFC 1123 '
            "subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
            "must start and end with an alphanumeric character (e.g. 'example.com', regex "
            "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
            "[a-z0-9])?)*')",
        ],
        id="attachment-empty-pv-name",
    ),
]


@pytest.mark.parametrize(("obj", "expected"), BAD_CREATES)
def test_create_is_refused_with_upstreams_causes(
    api: ApiService, obj: Any, expected: list[str]
) -> None:
    with pytest.raises(InvalidError) as raised:
        api.create(obj)
    assert causes(raised.value) == expected


def test_csi_driver_immutable_fields(api: ApiService) -> None:
    """ValidateCSIDriverUpdate: attachRequired (at upstream's path spec.attachedRequired)
    and volumeLifecycleModes."""
    created = api.create(driver())
    assert created.spec is not None
    changed = evolve(
        created,
        spec=evolve(created.spec, attach_required=False, volume_lifecycle_modes=("Ephemeral",)),
    )
    with pytest.raises(InvalidError) as raised:
        api.update(changed)
    assert causes(raised.value) == [
        "spec.attachedRequired: Invalid value: false: field is immutable",
        'spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{"Ephemeral"}: '
        "field is immutable",
    ]
    # Mutable flags may change.
    assert api.update(evolve(created, spec=evolve(created.spec, pod_info_on_mount=True)))


def test_csinode_registered_driver_is_immutable_but_drivers_may_be_added(
    api: ApiService,
) -> None:
    created = api.create(csi_node(node_driver(topologyKeys=["zone"])))
    added = serialization.from_dict(
        CSINode,
        {
            **serialization.to_dict(created),
            "spec": {
                "drivers": [
                    node_driver(topologyKeys=["zone"]),
                    node_driver("other.csi.k8s.io", allocatable={"count": 3}),
                ]
            },
        },
    )
    updated = api.update(added)
    assert len(updated.spec.drivers) == 2
    changed = serialization.from_dict(
        CSINode,
        {
            **serialization.to_dict(updated),
            "spec": {"drivers": [node_driver(topologyKeys=["region"])]},
        },
    )
    with pytest.raises(InvalidError) as raised:
        api.update(changed)
    assert causes(raised.value) == [
        'spec.drivers: Invalid value: storage.CSINodeDriver{Name:"ebs.csi.aws.com", '
        'NodeID:"i-123", TopologyKeys:[]string{"region"}, '
        "Allocatable:(*storage.VolumeNodeResources)(nil)}: field is immutable"
    ]


def test_volume_attachment_spec_is_immutable(api: ApiService) -> None:
    created = api.create(attachment())
    assert created.spec is not None
    with pytest.raises(InvalidError) as raised:
        api.update(evolve(created, spec=evolve(created.spec, node_name="n2")))
    [message] = causes(raised.value)
    assert message.startswith("spec: Invalid value: ")
    assert message.endswith(": field is immutable")
    assert '"nodeName":"n2"' in message


NOW = parse_rfc3339("2026-01-01T01:00:00Z")
CREATED = "2026-01-01T00:00:00Z"


def test_rows() -> None:
    """printCSIDriver, printCSINode, printVolumeAttachment."""
    created = {"name": "x", "creationTimestamp": CREATED}
    d = serialization.from_dict(
        CSIDriver,
        {
            "metadata": created,
            "spec": {"tokenRequests": [{"audience": "a"}, {"audience": "b"}]},
        },
    )
    assert csitables.print_csi_driver(d, NOW)[0] == [
        "x",
        True,
        False,
        False,
        "a,b",
        False,
        "<none>",
        "60m",
    ]
    n = serialization.from_dict(
        CSINode, {"metadata": created, "spec": {"drivers": [node_driver()]}}
    )
    assert csitables.print_csi_node(n, NOW)[0] == ["x", 1, "60m"]
    a = serialization.from_dict(
        VolumeAttachment,
        {
            "metadata": created,
            "spec": {"attacher": "d", "nodeName": "n1", "source": {"persistentVolumeName": "pv"}},
            "status": {"attached": True},
        },
    )
    assert csitables.print_volume_attachment(a, NOW)[0] == ["x", "d", "pv", "n1", True, "60m"]
    assert [c.name for c in csitables.CSI_DRIVER_COLUMNS] == [
        "Name", "AttachRequired", "PodInfoOnMount", "StorageCapacity", "TokenRequests",
        "RequiresRepublish", "Modes", "Age",
    ]  # fmt: skip
