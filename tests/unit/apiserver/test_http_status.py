"""Status bodies round-trip: ``apiserver.status`` renders, ``client.http`` parses back.

docs/design.md "Errors are Kubernetes Status objects end to end"; STYLE C.5.2: the HTTP
client raises the same ``StatusError`` subclass with the same Status the service raised.
"""

from __future__ import annotations

import json

import pytest

from kubeprio.api import errors
from kubeprio.api.core import Pod, PodSpec
from kubeprio.api.meta import ObjectMeta, StatusCause, StatusDetails
from kubeprio.api.scheduling import PriorityClass
from kubeprio.apiserver import status
from kubeprio.client import http as client_http
from tests.unit.apiserver.http_helpers import make_client

ERRORS = [
    errors.not_found("pods", "", "x"),
    errors.already_exists("priorityclasses", "scheduling.k8s.io", "high"),
    errors.conflict("pods", "", "x"),
    errors.forbidden_error("pods", "", "bad", "no PriorityClass with name nosuch was found"),
    errors.invalid_error(
        "PriorityClass",
        "scheduling.k8s.io",
        "x",
        [errors.required("value"), errors.invalid("description", 3, "must be a string")],
    ),
    errors.bad_request("bad selector", [StatusCause(reason="FieldValueInvalid", field="x")]),
    errors.gone("too old resource version: 1 (5)"),
    errors.TooManyRequestsError.build(
        "Cannot evict pod as it would violate the pod's disruption budget.",
        details=StatusDetails(causes=(StatusCause(reason="DisruptionBudget", message="m"),)),
    ),
    errors.internal_error("boom"),
    errors.UnauthorizedError.build("Unauthorized"),
    errors.UnsupportedMediaTypeError.build("unknown format"),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
def test_status_round_trip_keeps_class_and_body(error):
    body = json.dumps(status.error_body(error))
    parsed = client_http.status_error(status.error_code(error), body)
    assert type(parsed) is type(error)
    assert parsed.status == error.status


def test_plain_text_errors_become_status_errors_with_the_http_code():
    parsed = client_http.status_error(403, "forbidden by proxy\n")
    assert isinstance(parsed, errors.ForbiddenError)
    assert parsed.message == "forbidden by proxy"


@pytest.mark.parametrize("text", ['unknown field "spec.foo"', "back\\slash", "plain"])
def test_warning_header_round_trip(text):
    assert client_http.parse_warning(status.warning_header(text)) == text


def _http_client(api, **kwargs):
    # The TestClient transport hands over a response once the app finishes it, so
    # watches here end quickly; tests/e2e covers real streaming.
    test_client = make_client(api, watch_timeout=0.1)
    return client_http.HttpClient("http://testserver", transport=test_client._transport, **kwargs)


def test_http_client_raises_the_services_error_classes(api):
    client = _http_client(api)
    with pytest.raises(errors.NotFoundError) as caught:
        client.get(Pod, "nosuch", "default")
    assert caught.value.message == 'pods "nosuch" not found'
    pod = Pod(
        metadata=ObjectMeta(name="bad", namespace="default"),
        spec=PodSpec(priority_class_name="nosuch"),
    )
    with pytest.raises(errors.ForbiddenError) as forbidden:
        client.create(pod)
    with pytest.raises(errors.ForbiddenError) as in_process:
        api.create(pod)
    assert forbidden.value.status == in_process.value.status


def test_http_client_crud_list_and_watch(api):
    warnings: list[str] = []
    client = _http_client(api, on_warning=warnings.append)
    watch = client.watch(PriorityClass)
    initial = watch.poll()
    assert {e.object.metadata.name for e in initial} == {
        "system-cluster-critical",
        "system-node-critical",
    }
    created = client.create(PriorityClass(metadata=ObjectMeta(name="high"), value=10))
    assert created.metadata.uid
    assert [p.metadata.name for p in client.list(PriorityClass, limit=1).items] == ["high"]
    patched = client.patch(PriorityClass, "high", {"description": "d"})
    assert patched.description == "d"
    deleted = client.delete(PriorityClass, "high")
    assert deleted.metadata.uid == created.metadata.uid
    watch.close()
    assert warnings == []
