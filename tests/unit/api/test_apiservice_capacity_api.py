"""APIService and CSIStorageCapacity through the API service: validation texts and Tables.

Upstream rules (v1.32): ``kube-aggregator/pkg/apis/apiregistration/validation``
(``ValidateAPIService``/``...Update``/``...StatusUpdate``),
``kube-aggregator/pkg/registry/apiservice/strategy.go`` (status reset on create, a local
APIService Available at once) and ``etcd.go`` (``ConvertToTable``);
``pkg/apis/storage/validation/validation.go`` (``ValidateCSIStorageCapacity``/``...Update``)
and ``pkg/printers/internalversion/printers.go`` (``printCSIStorageCapacity``).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import serialization
from kubeprio.api.apiregistration import APIService, APIServiceCondition, APIServiceStatus
from kubeprio.api.errors import InvalidError
from kubeprio.api.model import evolve
from kubeprio.api.storagecapacity import CSIStorageCapacity
from kubeprio.apiserver import apiregistrationtables, storagecapacitytables
from kubeprio.apiserver.service import ApiService
from kubeprio.clock import parse_rfc3339

GOOD_SPEC: dict[str, Any] = {
    "group": "metrics.example.io",
    "version": "v1beta1",
    "groupPriorityMinimum": 100,
    "versionPriority": 100,
}


def api_service(name: str = "v1beta1.metrics.example.io", **spec: Any) -> APIService:
    return serialization.from_dict(
        APIService, {"metadata": {"name": name}, "spec": {**GOOD_SPEC, **spec}}
    )


def capacity(**fields: Any) -> CSIStorageCapacity:
    body = {"storageClassName": "fast", "capacity": "10Gi", **fields}
    return serialization.from_dict(
        CSIStorageCapacity, {"metadata": {"name": "cap", "namespace": "default"}, **body}
    )


def causes(exc: InvalidError) -> list[str]:
    details = exc.status.details
    assert details is not None
    return [f"{c.field}: {c.message}" for c in details.causes or ()]


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            api_service(name="v1.wrong"),
            [
                'metadata.name: Invalid value: "v1.wrong": must be `spec.version+"."+spec.group`: '
                '"v1beta1.metrics.example.io"'
            ],
        ),
        (
            api_service(name="v2.", group="", version="v2"),
            [
                "spec.group: Required value: only v1 may have an empty group and it better be legacy kube"
            ],
        ),
        (
            api_service(name="V1.Bad_Group", group="Bad_Group", version="V1"),
            [
                'spec.group: Invalid value: "Bad_Group": a lowercase RFC 1123 subdomain must consist '
                "of lower case alphanumeric characters, '-' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                'spec.version: Invalid value: "V1": a DNS-1035 label must consist of lower case '
                "alphanumeric characters or '-', start with an alphabetic character, and end with "
                "an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
                "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            ],
        ),
        (
            api_service(groupPriorityMinimum=0, versionPriority=1001),
            [
                "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
                "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000",
            ],
        ),
        (
            api_service(caBundle="AAAA", insecureSkipTLSVerify=True),
            [
                'spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle',
                "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have "
                "insecureSkipTLSVerify",
            ],
        ),
        (
            api_service(service={"port": 443}, caBundle="AAAA", insecureSkipTLSVerify=True),
            [
                "spec.service.namespace: Required value",
                "spec.service.name: Required value",
                "spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present",
            ],
        ),
        (
            capacity(storageClassName="", capacity="-1"),
            [
                'storageClassName: Invalid value: "": a lowercase RFC 1123 subdomain must consist '
                "of lower case alphanumeric characters, '-' or '.', and must start and end with an "
                "alphanumeric character (e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                'capacity: Invalid value: "-1": must be greater than or equal to 0',
            ],
        ),
        (
            capacity(nodeTopology={"matchExpressions": [{"key": "zone", "operator": "In"}]}),
            [
                "nodeTopology.matchExpressions[0].values: Required value: must be specified when "
                "`operator` is 'In' or 'NotIn'"
            ],
        ),
    ],
)
def test_create_rejections(api: ApiService, obj: Any, expected: list[str]) -> None:
    with pytest.raises(InvalidError) as caught:
        api.create(obj)
    assert causes(caught.value) == expected


def test_local_api_service_is_available_and_status_is_reset(api: ApiService) -> None:
    sent = evolve(
        api_service(),
        status=APIServiceStatus(conditions=(APIServiceCondition(type="Other", status="True"),)),
    )
    created = api.create(sent)
    [condition] = serialization.to_dict(created)["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "Available",
        "True",
        "Local",
    )
    remote = api.create(
        api_service(name="v1.remote.io", group="remote.io", version="v1",
                    service={"namespace": "default", "name": "remote"})
    )  # fmt: skip
    assert serialization.to_dict(remote)["status"] == {}


def test_status_update_rejects_an_unknown_condition_status(api: ApiService) -> None:
    created = api.create(api_service())
    bad = evolve(
        created,
        status=APIServiceStatus(
            conditions=(APIServiceCondition(type="Available", status="Maybe"),)
        ),
    )
    with pytest.raises(InvalidError) as caught:
        api.update_status(bad)
    assert causes(caught.value) == [
        'status.conditions[0].status: Unsupported value: "Maybe": supported values: "True", "False", "Unknown"'
    ]


def test_capacity_inputs_are_immutable_and_capacity_is_not(api: ApiService) -> None:
    created = api.create(capacity(nodeTopology={"matchLabels": {"zone": "a"}}))
    changed = api.update(evolve(created, capacity=capacity(capacity="5Gi").capacity))
    assert str(changed.capacity) == "5Gi"
    with pytest.raises(InvalidError) as caught:
        api.update(evolve(changed, storage_class_name="slow"))
    assert causes(caught.value) == ['storageClassName: Invalid value: "slow": field is immutable']


NOW = parse_rfc3339("2026-01-01T01:00:00Z")


def test_rows() -> None:
    created = {"name": "v1.apps", "creationTimestamp": "2026-01-01T00:00:00Z"}
    local = serialization.from_dict(
        APIService,
        {
            "metadata": created,
            "spec": {"group": "apps", "version": "v1"},
            "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Local"}]},
        },
    )
    assert apiregistrationtables.print_api_service(local, NOW)[0] == [
        "v1.apps",
        "Local",
        "True",
        "60m",
    ]
    remote = serialization.from_dict(
        APIService,
        {
            "metadata": created,
            "spec": {"service": {"namespace": "kube-system", "name": "metrics-server"}},
            "status": {
                "conditions": [
                    {"type": "Available", "status": "False", "reason": "ServiceNotFound"}
                ]
            },
        },
    )
    assert apiregistrationtables.print_api_service(remote, NOW)[0][1:3] == [
        "kube-system/metrics-server",
        "False (ServiceNotFound)",
    ]
    assert apiregistrationtables.available_cell(evolve(remote, status=None)) == "Unknown"
    assert storagecapacitytables.print_csi_storage_capacity(capacity(), NOW)[0] == [
        "cap",
        "fast",
        "10Gi",
    ]
    unset = evolve(capacity(), capacity=None)
    assert storagecapacitytables.print_csi_storage_capacity(unset, NOW)[0][2] == "<unset>"
