"""Pod volumes: names, one source each, claims and generic ephemeral volumes.

Upstream (``pkg/apis/core/validation/validation.go``, v1.32): ``ValidateVolumes``,
``validateVolumeSource``, ``validatePersistentClaimVolumeSource``,
``validateEphemeralVolumeSource``, ``ValidatePersistentVolumeClaimTemplate``,
``ValidateTemplateObjectMeta`` (cases after ``TestValidateVolumes`` and
``TestEphemeralVolumes`` in ``validation_test.go``). Writes go through ``ApiService``; a
refused write stores nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.apiserver.service import ApiService
from tests.manifests import causes, create, deployment_doc, pod_doc, rejected

DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
TEMPLATE = {
    "metadata": {"labels": {"team": "a"}},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
}


def ephemeral(name: str = "scratch", template: Any = TEMPLATE) -> dict[str, Any]:
    return {"name": name, "ephemeral": {"volumeClaimTemplate": template}}


def pod_with(*volumes: dict[str, Any], name: str = "p") -> dict[str, Any]:
    doc = pod_doc(name)
    doc["spec"]["volumes"] = list(volumes)
    return doc


VALID = [
    pytest.param([{"name": "data", "persistentVolumeClaim": {"claimName": "c"}}], id="claim"),
    pytest.param([ephemeral()], id="ephemeral"),
    pytest.param([{"name": "tmp", "emptyDir": {}}, ephemeral()], id="emptydir-and-ephemeral"),
    pytest.param(
        [{"name": "a", "persistentVolumeClaim": {"claimName": "p-b"}}, ephemeral("c")],
        id="claim-named-like-another-volume",
    ),
]


@pytest.mark.parametrize("volumes", VALID)
def test_valid_volumes_are_accepted(api: ApiService, volumes: list[dict[str, Any]]) -> None:
    pod = create(api, pod_with(*volumes))
    assert [v["name"] for v in pod.spec.extra["volumes"]] == [v["name"] for v in volumes]


INVALID = [
    pytest.param(
        [{"name": "x"}],
        ["spec.volumes[0]: Required value: must specify a volume type"],
        id="no-source",
    ),
    pytest.param(
        [{"name": "x", "emptyDir": {}, "persistentVolumeClaim": {"claimName": "c"}}],
        [
            "spec.volumes[0].persistentVolumeClaim: Forbidden: may not specify more than 1 "
            "volume type"
        ],
        id="two-sources",
    ),
    pytest.param(
        [{"name": "x", "emptyDir": {}, "downwardAPI": {}}],
        ["spec.volumes[0].downwarAPI: Forbidden: may not specify more than 1 volume type"],
        id="two-sources-upstream-misspelling",
    ),
    pytest.param(
        [{"emptyDir": {}}],
        ["spec.volumes[0].name: Required value"],
        id="no-name",
    ),
    pytest.param(
        [{"name": "Bad_Name", "emptyDir": {}}],
        [f'spec.volumes[0].name: Invalid value: "Bad_Name": {DNS_LABEL}'],
        id="name-not-a-label",
    ),
    pytest.param(
        [{"name": "x", "emptyDir": {}}, {"name": "x", "emptyDir": {}}],
        ['spec.volumes[1].name: Duplicate value: "x"'],
        id="duplicate",
    ),
    pytest.param(
        [{"name": "x", "persistentVolumeClaim": {}}],
        ["spec.volumes[0].persistentVolumeClaim.claimName: Required value"],
        id="claim-name-required",
    ),
    pytest.param(
        [{"name": "x", "ephemeral": {}}],
        ["spec.volumes[0].ephemeral.volumeClaimTemplate: Required value"],
        id="template-required",
    ),
    pytest.param(
        [ephemeral(template={"spec": {"resources": {"requests": {"storage": "1Gi"}}}})],
        [
            "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.accessModes: Required value: "
            "at least 1 access mode is required"
        ],
        id="template-spec-is-a-claim-spec",
    ),
    pytest.param(
        [ephemeral(template={**TEMPLATE, "metadata": {"name": "n", "finalizers": ["f"]}})],
        [
            "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.name: Forbidden: cannot be "
            "set for a template",
            "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.finalizers: Forbidden: "
            "cannot be set for a template",
        ],
        id="template-metadata-labels-and-annotations-only",
    ),
    pytest.param(
        [ephemeral(), {"name": "d", "persistentVolumeClaim": {"claimName": "p-scratch"}}],
        [
            'spec.volumes[1].persistentVolumeClaim.claimName: Invalid value: "p-scratch": '
            "must not reference a PVC that gets created for an ephemeral volume"
        ],
        id="claim-of-ephemeral-volume",
    ),
]


@pytest.mark.parametrize(("volumes", "expected"), INVALID)
def test_invalid_volumes_are_refused(
    api: ApiService, volumes: list[dict[str, Any]], expected: list[str]
) -> None:
    assert causes(rejected(api, pod_with(*volumes))) == expected


def test_ephemeral_claim_name_must_be_a_subdomain(api: ApiService) -> None:
    """``validateVolumeSource``: ``<pod>-<volume>`` is checked as a volume name."""
    pod_name = "p" * 200
    volume = "v" * 60
    claim = f"{pod_name}-{volume}"
    assert causes(rejected(api, pod_with(ephemeral(volume), name=pod_name))) == [
        f'spec.volumes[0].name: Invalid value: "{volume}": PVC name "{claim}": '
        "must be no more than 253 characters"
    ]


def test_template_volumes_are_checked_without_a_pod_name(api: ApiService) -> None:
    """A Deployment's template has no name: the created-claim checks are skipped, the
    source rules apply."""
    doc = deployment_doc()
    doc["spec"]["template"]["spec"]["volumes"] = [ephemeral(), {"name": "x"}]
    assert causes(rejected(api, doc)) == [
        "spec.template.spec.volumes[1]: Required value: must specify a volume type"
    ]
