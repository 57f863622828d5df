"""A create or update body that cannot be read as an object: upstream's 400, word for word.

Upstream: ``SimpleMetaFactory.Interpret`` (k8s.io/apimachinery/pkg/runtime/serializer/
json/meta.go) reads ``apiVersion``/``kind`` with ``encoding/json`` and
``schema.ParseGroupVersion``; when it fails, ``transformDecodeError`` (k8s.io/apiserver/
pkg/endpoints/handlers/rest.go) answers "the object provided is unrecognized (must be of
type K): <cause> (<summarizeData(body, 30)>)". Each refused body leaves the store as it
was.
"""

from __future__ import annotations

import pytest

from kubeprio.apiserver.decodeerrors import summarize
from tests.unit.apiserver.http_helpers import make_client, pod_manifest

PODS = "/api/v1/namespaces/default/pods"
JSON = {"Content-Type": "application/json"}
YAML = {"Content-Type": "application/yaml"}
UNRECOGNIZED = "the object provided is unrecognized (must be of type Pod): "
PARSE = "couldn't get version/kind; json parse error: "
FIND_KIND = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
    'Kind string "json:\\"kind,omitempty\\"" }'
)
LONG = b'{"apiVersion": "v1", "kind": "Pod", "metadata": {'


@pytest.fixture
def client(api):
    return make_client(api)


@pytest.mark.parametrize(
    ("body", "headers", "cause", "summary"),
    [
        (b"{bad", JSON, PARSE + "invalid character 'b' looking for beginning of object key string", "{bad"),
        (b"", JSON, PARSE + "unexpected end of JSON input", "<empty>"),
        (b'{"a": 1,}', JSON, PARSE + "invalid character '}' looking for beginning of object key string", '{"a": 1,}'),
        (b'{"a" 1}', JSON, PARSE + "invalid character '1' after object key", '{"a" 1}'),
        (b'{"a": 1} x', JSON, PARSE + "invalid character 'x' after top-level value", '{"a": 1} x'),
        # NaN is not JSON to Go (Python's decoder would take it).
        (b'{"a": NaN}', JSON, PARSE + "invalid character 'N' looking for beginning of value", '{"a": NaN}'),
        # Not starting with "{": the summary is hex.
        (b" {bad", JSON, PARSE + "invalid character 'b' looking for beginning of object key string", "207b626164"),
        (b"[1]", JSON, PARSE + f"json: cannot unmarshal array into Go value of type {FIND_KIND}", "5b315d"),
        (b'"pod"', JSON, PARSE + f"json: cannot unmarshal string into Go value of type {FIND_KIND}", "22706f6422"),
        (b"- 1\n", YAML, PARSE + f"json: cannot unmarshal array into Go value of type {FIND_KIND}", "2d20310a"),
        (b'{"apiVersion": 1}', JSON, PARSE + "json: cannot unmarshal number into Go struct field .apiVersion of type string", '{"apiVersion": 1}'),
        (b'{"kind": ["Pod"]}', JSON, PARSE + "json: cannot unmarshal array into Go struct field .kind of type string", '{"kind": ["Pod"]}'),
        (b'{"kind": true, "apiVersion": {}}', JSON, PARSE + "json: cannot unmarshal bool into Go struct field .kind of type string", '{"kind": true, "apiVersion": { ...'),
        (b'{"apiVersion": "a/b/c", "kind": "Pod"}', JSON, "unexpected GroupVersion string: a/b/c", '{"apiVersion": "a/b/c", "kind" ...'),
        (LONG, JSON, PARSE + "unexpected end of JSON input", '{"apiVersion": "v1", "kind": " ...'),
    ],
    ids=[
        "syntax", "empty", "trailing-comma", "missing-colon", "after-value", "nan",
        "leading-space", "array", "string", "yaml-array", "apiversion-number", "kind-array",
        "first-type-error-wins", "group-version", "truncated",
    ],
)  # fmt: skip
def test_an_unreadable_body_is_upstreams_400(client, body, headers, cause, summary):
    before = client.get(PODS).json()["metadata"]["resourceVersion"]
    response = client.post(PODS, content=body, headers=headers)
    assert response.status_code == 400
    status = response.json()
    assert status["reason"] == "BadRequest"
    assert status["message"] == f"{UNRECOGNIZED}{cause} ({summary})"
    assert client.get(PODS).json()["metadata"]["resourceVersion"] == before


def test_an_update_body_is_read_the_same_way(client):
    assert client.post(PODS, json=pod_manifest("a")).status_code == 201
    response = client.put(f"{PODS}/a", content=b"{bad", headers=JSON)
    assert response.status_code == 400
    assert response.json()["message"] == (
        f"{UNRECOGNIZED}{PARSE}invalid character 'b' looking for beginning of object key "
        "string ({bad)"
    )


def test_a_null_body_is_an_empty_object(client):
    """Go unmarshals null into the empty object, which then fails validation."""
    response = client.post(PODS, content=b"null", headers=JSON)
    assert response.status_code == 422
    fields = [cause["field"] for cause in response.json()["details"]["causes"]]
    assert "metadata.name" in fields


def test_invalid_utf8_in_a_string_is_the_replacement_character(client):
    """Go's decoder reads a broken UTF-8 sequence in a string as U+FFFD."""
    body = (
        b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","annotations":{"note":"x\xff"}},'
        b'"spec":{"containers":[{"name":"c","image":"nginx"}]}}'
    )
    response = client.post(PODS, content=body, headers=JSON)
    assert response.status_code == 201
    assert response.json()["metadata"]["annotations"] == {"note": "x\ufffd"}


@pytest.mark.parametrize(
    ("body", "summary"),
    [
        (b"", "<empty>"),
        (b"{" + b"a" * 29, "{" + "a" * 29),
        (b"{" + b"a" * 30, "{" + "a" * 29 + " ..."),
        (b"x" * 31, "78" * 30 + " ..."),
        # A cut multi-byte character shows as U+FFFD, as Go's JSON encoder writes it.
        (b"{" + b"a" * 28 + "é".encode(), "{" + "a" * 28 + "\ufffd ..."),
    ],
)
def test_summarize_data(body, summary):
    assert summarize(body) == summary
