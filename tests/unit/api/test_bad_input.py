"""Bad input gives a clear error naming the field, and nothing is stored.

Text that is not YAML/JSON fails in ``api.manifest.parse_text`` with the file and
document; documents that do not decode fail like a real API server's body decoder
(``transformDecodeError`` in ``apiserver/pkg/endpoints/handlers/rest.go``): a 400
``<Kind> in version "<v>" cannot be handled as a <Kind>: <decoder error>`` whose
decoder error names the Go struct field, as ``encoding/json`` does
(``json: cannot unmarshal number 3000000000 into Go struct field PriorityClass.value of
type int32``). Quantities fail with ``ParseQuantity``'s own message.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import errors, kinds, manifest
from kubeprio.api.serialization import DecodeError
from kubeprio.apiserver.service import ApiService
from tests.manifests import create, pod_doc, with_path

PC = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}}

DECODE_CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "int32 overflow",
        {**PC, "value": 3_000_000_000},
        'PriorityClass in version "v1" cannot be handled as a PriorityClass: json: cannot unmarshal '
        "number 3000000000 into Go struct field PriorityClass.value of type int32",
    ),
    (
        "string for an int32",
        {**PC, "value": "1000"},
        'PriorityClass in version "v1" cannot be handled as a PriorityClass: json: cannot unmarshal '
        "string into Go struct field PriorityClass.value of type int32",
    ),
    (
        "string for a bool",
        {**PC, "value": 1, "globalDefault": "yes"},
        'PriorityClass in version "v1" cannot be handled as a PriorityClass: json: cannot unmarshal '
        "string into Go struct field PriorityClass.globalDefault of type bool",
    ),
    (
        "invalid quantity",
        with_path(pod_doc(), "spec.containers.0.resources", {"requests": {"cpu": "1.5.5"}}),
        'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    (
        "unknown quantity suffix",
        with_path(pod_doc(), "spec.containers.0.resources", {"limits": {"memory": "1mi"}}),
        'Pod in version "v1" cannot be handled as a Pod: unable to parse quantity\'s suffix',
    ),
    (
        "string for a list",
        with_path(pod_doc(), "spec.containers", "nginx"),
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct '
        "field PodSpec.spec.containers of type []v1.Container",
    ),
    (
        "number for a label value",
        with_path(pod_doc(), "metadata.labels", {"tier": 1}),
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct '
        "field ObjectMeta.metadata.labels of type string",
    ),
    (
        "unknown kind",
        {"apiVersion": "v1", "kind": "Pood", "metadata": {"name": "x"}},
        'Pood in version "v1" cannot be handled as a Pood: no kind "Pood" is registered for version "v1"',
    ),
    (
        "unknown version",
        {"apiVersion": "apps/v9", "kind": "Deployment", "metadata": {"name": "x"}},
        'Deployment in version "v9" cannot be handled as a Deployment: no kind "Deployment" is '
        'registered for version "apps/v9"',
    ),
    (
        "kind missing",
        {"apiVersion": "v1", "metadata": {"name": "x"}},
        """Object 'Kind' is missing in '{"apiVersion": "v1", "metadata": {"name": "x"}}'""",
    ),
]


@pytest.mark.parametrize(
    ("doc", "message"), [c[1:] for c in DECODE_CASES], ids=[c[0] for c in DECODE_CASES]
)
def test_undecodable_documents_are_400_and_store_nothing(
    api: ApiService, doc: dict[str, Any], message: str
) -> None:
    before = api.store.current_revision()
    with pytest.raises(errors.BadRequestError) as caught:
        create(api, doc)
    assert caught.value.message == message
    assert (caught.value.status.code, caught.value.status.reason) == (400, "BadRequest")
    assert api.store.current_revision() == before


def test_decode_failure_status_uses_the_endpoint_kind() -> None:
    """A body decoded for another endpoint names both kinds, as ``transformDecodeError`` does."""
    failure = manifest.decode_failure_status(
        DecodeError("json: cannot unmarshal string into Go value of type v1.Pod", path=""),
        {"apiVersion": "apps/v1", "kind": "Deployment"},
        expected_kind="Pod",
    )
    assert failure.message == (
        'Deployment in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go '
        "value of type v1.Pod"
    )
    unknown = manifest.decode_failure_status(kinds.UnknownKindError("no kind"), {"kind": ""})
    assert unknown.message == "no kind"


def test_non_object_body_is_400() -> None:
    with pytest.raises(errors.BadRequestError) as caught:
        manifest.decode_request(["not", "an", "object"])
    assert (
        caught.value.message
        == "json: cannot unmarshal array into Go value of type map[string]interface {}"
    )


@pytest.mark.parametrize(
    ("text", "source", "message"),
    [
        ("kind: Pod\nmetadata: [1, 2\n", "pod.yaml", "pod.yaml: invalid YAML: "),
        ('{"kind": "Pod", ', "pod.json", "pod.json: invalid YAML: "),
        (
            "- a\n- b\n",
            "list.yaml",
            "list.yaml (document 0): expected a mapping (an object), got list",
        ),
        (
            "kind: List\nitems: 3\n",
            "l.yaml",
            "l.yaml (document 0): items of a list must be an array",
        ),
    ],
    ids=["broken YAML", "broken JSON", "not an object", "list items not an array"],
)
def test_malformed_text_names_the_source(text: str, source: str, message: str) -> None:
    with pytest.raises(manifest.ManifestError) as caught:
        manifest.parse_text(text, source)
    assert str(caught.value).startswith(message)


def test_manifest_decode_errors_name_the_document_and_field() -> None:
    [document] = manifest.parse_text(
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: x}\nvalue: 3000000000\n",
        "pc.yaml",
    )
    with pytest.raises(manifest.ManifestError) as caught:
        manifest.decode_document(document)
    assert str(caught.value) == (
        "pc.yaml (document 0): json: cannot unmarshal number 3000000000 into Go struct field "
        "PriorityClass.value of type int32 (field value)"
    )
    assert caught.value.path == "value"
