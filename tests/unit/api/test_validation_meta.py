"""Object-metadata validation shared by every kind.

``ValidateObjectMeta``/``ValidateObjectMetaUpdate``
(``apimachinery/pkg/api/validation/objectmeta.go``), ``ValidateLabels``/
``ValidateLabelSelector`` (``apimachinery/pkg/apis/meta/v1/validation``) and the name
rules of ``pkg/util/validation`` (``IsDNS1123Subdomain``, ``IsDNS1123Label``), with
label keys and values checked by ``api.selectors`` (``content.IsLabelKey``/
``IsLabelValue``). Cases follow ``TestValidateObjectMeta*`` and ``TestValidateLabels``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubeprio.api import errors
from kubeprio.api.core import Pod
from kubeprio.api.meta import LabelSelector, LabelSelectorRequirement
from kubeprio.api.validation.meta import (
    dns1123_label_errors,
    validate_annotations,
    validate_label_selector,
    validate_labels,
)
from kubeprio.apiserver.service import ApiService
from tests.builders import pod
from tests.manifests import causes, create, node_doc, pod_doc, rejected, with_path

PREFIX_ERROR = (
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (
            "metadata.generateName",
            "Web_",
            [
                "metadata.generateName: Invalid value: \"Web_\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ],
        ),
        (
            "metadata.labels",
            {"Example.com/app": "x"},
            [f'metadata.labels: Invalid value: "Example.com/app": {PREFIX_ERROR}'],
        ),
        (
            "metadata.labels",
            {"app": "x" * 64},
            [f'metadata.labels: Invalid value: "{"x" * 64}": must be no more than 63 characters'],
        ),
        (
            "metadata.annotations",
            {"a b": "x"},
            [
                "metadata.annotations: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ],
        ),
        (
            "metadata.annotations",
            {"big": "x" * (256 * 1024)},
            ["metadata.annotations: Too long: may not be more than 262144 bytes"],
        ),
    ],
    ids=[
        "generateName",
        "label key prefix",
        "label value length",
        "annotation key",
        "annotations too big",
    ],
)
def test_metadata_rules(api: ApiService, path: str, value: Any, expected: list[str]) -> None:
    doc = with_path(pod_doc(), path, value)
    if path == "metadata.generateName":
        doc["metadata"]["name"] = "web"
    assert causes(rejected(api, doc)) == expected


def test_generate_name_prefix_may_end_with_a_dash(api: ApiService) -> None:
    """``NameIsDNSSubdomain(prefix=true)`` masks the trailing dash."""
    doc = with_path(pod_doc(), "metadata", {"generateName": "web-", "namespace": "default"})
    assert create(api, doc).metadata.name.startswith("web-")


def test_annotation_keys_are_checked_lower_cased() -> None:
    assert validate_annotations({"Example.COM/Key": "v"}, "metadata.annotations") == []


def test_cluster_scoped_object_may_not_have_a_namespace(api: ApiService) -> None:
    assert causes(rejected(api, with_path(node_doc(), "metadata.namespace", "default"))) == [
        "metadata.namespace: Forbidden: not allowed on this type"
    ]


def test_labels_errors_are_reported_in_key_order() -> None:
    found = validate_labels({"b": "x y", "a": "x y"}, "metadata.labels")
    assert [str(e).split(":")[0] for e in found] == ["metadata.labels", "metadata.labels"]
    assert len(found) == 2


@pytest.mark.parametrize(
    ("requirement", "expected"),
    [
        (
            LabelSelectorRequirement(key="app", operator="In"),
            [
                "s.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
            ],
        ),
        (
            LabelSelectorRequirement(key="app", operator="Exists", values=("x",)),
            [
                "s.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            ],
        ),
        (
            LabelSelectorRequirement(key="app", operator="Has", values=("x",)),
            ['s.matchExpressions[0].operator: Invalid value: "Has": not a valid selector operator'],
        ),
        (
            LabelSelectorRequirement(key="app", operator="In", values=("a b",)),
            [
                "s.matchExpressions[0].values[0]: Invalid value: \"a b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
            ],
        ),
    ],
    ids=["In without values", "Exists with values", "unknown operator", "bad value"],
)
def test_label_selector_requirements(
    requirement: LabelSelectorRequirement, expected: list[str]
) -> None:
    """``ValidateLabelSelectorRequirement`` (``TestValidateLabelSelector``)."""
    assert [
        str(e)
        for e in validate_label_selector(LabelSelector(match_expressions=(requirement,)), "s")
    ] == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("web-1", []),
        ("a.b", ["must not contain dots"]),
        ("-a", None),
        ("a" * 64, ["must be no more than 63 characters"]),
    ],
)
def test_dns1123_label(value: str, expected: list[str] | None) -> None:
    """``IsDNS1123Label``: a subdomain-but-not-label gets the short "must not contain dots"."""
    found = dns1123_label_errors(value)
    if expected is None:
        assert len(found) == 1
        assert found[0].startswith("a lowercase RFC 1123 label")
    else:
        assert found == expected


def test_uid_may_not_change_on_update(api: ApiService) -> None:
    """``rest.BeforeUpdate`` keeps a given uid, and ``ValidateObjectMetaUpdate`` refuses a new
    one (a patch's: a replace's uid is a storage precondition, checked before validation,
    tests/unit/apiserver/test_storageprecondition.py)."""
    created = api.create(pod("x").build())
    with pytest.raises(errors.InvalidError) as caught:
        api.patch_object(
            Pod, "x", {"metadata": {"uid": "other"}}, namespace=created.metadata.namespace
        )
    assert causes(caught.value) == ['metadata.uid: Invalid value: "other": field is immutable']
    without_uid = dataclasses.replace(
        created, metadata=dataclasses.replace(created.metadata, uid=None, labels={"a": "b"})
    )
    assert api.update(without_uid).metadata.uid == created.metadata.uid


def test_update_label_errors_are_reported(api: ApiService) -> None:
    created = api.create(pod("x").build())
    with pytest.raises(errors.InvalidError) as caught:
        api.update(
            dataclasses.replace(
                created, metadata=dataclasses.replace(created.metadata, labels={"a": "b c"})
            )
        )
    # A pod update re-runs ValidateObjectMeta after ValidateObjectMetaUpdate: both report it.
    assert len(causes(caught.value)) == 2
    assert isinstance(api.get(Pod, "x", "default"), Pod)
