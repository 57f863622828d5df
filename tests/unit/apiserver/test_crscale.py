"""The ``scale`` subresource of custom resources, as v1.32's
``apiextensions-apiserver/pkg/registry/customresource/etcd.go`` (``ScaleREST``,
``scaleFromCustomResource``, ``scaleUpdatedObjectInfo.UpdatedObject``) and
``validator.go`` (``ValidateScaleSpec``, ``ValidateScaleStatus``) serve it: path mapping,
the accessor errors of ``unstructured.NestedInt64``/``NestedString``, and the HTTP
verbs through the app (GET, PUT, merge and JSON patch; 500 for a missing replicas
value, 400 for a patch that leaves it empty, 409 on a stale resourceVersion, 422 from
the object's schema)."""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api.apiextensions import CustomResourceSubresourceScale
from kubeprio.api.errors import InternalError
from kubeprio.apiserver import crscale
from tests.unit.controllers.crdstack import WIDGETS, CrdStack, widget

PATHS = CustomResourceSubresourceScale(
    spec_replicas_path=".spec.replicas",
    status_replicas_path=".status.replicas",
    label_selector_path=".status.selector",
)
OBJECT: dict[str, Any] = {
    "metadata": {
        "name": "w",
        "namespace": "a",
        "uid": "u-1",
        "resourceVersion": "7",
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "labels": {"x": "y"},
    },
    "spec": {"replicas": 3},
    "status": {"replicas": 2, "selector": "app=w"},
}


@pytest.mark.parametrize(
    ("document", "paths", "expected"),
    [
        # Every path present.
        (OBJECT, PATHS, (3, 2, "app=w", True)),
        # Absent status and selector: zero and empty; absent spec replicas: not found.
        ({"metadata": {}, "spec": {}}, PATHS, (None, 0, None, False)),
        # A path without its leading dot reads the same field.
        (
            OBJECT,
            CustomResourceSubresourceScale(
                spec_replicas_path="spec.replicas", status_replicas_path="status.replicas"
            ),
            (3, 2, None, True),
        ),
    ],
)
def test_scale_of_maps_the_paths(document, paths, expected):
    scale, found = crscale.scale_of(document, paths)
    assert scale.spec is not None
    assert scale.status is not None
    assert (scale.spec.replicas, scale.status.replicas, scale.status.selector, found) == expected
    assert scale.metadata.name == document["metadata"].get("name")
    assert scale.metadata.labels is None  # only name, namespace, uid, rv and creation


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"spec": {"replicas": "three"}},
            ".spec.replicas accessor error: three is of the type string, expected int64",
        ),
        (
            {"spec": {"replicas": 1.5}},
            ".spec.replicas accessor error: 1.5 is of the type float64, expected int64",
        ),
        (
            {"spec": "flat"},
            ".spec accessor error: flat is of the type string, expected map[string]interface{}",
        ),
    ],
)
def test_a_mistyped_path_is_the_accessor_error(document, message):
    with pytest.raises(crscale.ScalePathError, match="^" + message.replace("[", r"\[") + "$"):
        crscale.nested_int(document, ".spec.replicas")


def test_get_without_spec_replicas_is_an_internal_error():
    with pytest.raises(InternalError) as raised:
        crscale.read_scale({"metadata": {}, "spec": {}}, PATHS)
    assert raised.value.status.message == (
        'Internal error occurred: the spec replicas field ".spec.replicas" does not exist'
    )


def test_with_replicas_sets_the_path_and_the_precondition():
    scale, _ = crscale.scale_of({"metadata": {"resourceVersion": "3"}}, PATHS)
    assert scale.spec is not None
    scale = type(scale)(metadata=scale.metadata, spec=type(scale.spec)(replicas=4))
    updated = crscale.with_replicas({"metadata": {"resourceVersion": "9"}}, scale, PATHS)
    # Missing maps on the way are created; the Scale's resourceVersion is the precondition.
    assert updated == {"metadata": {"resourceVersion": "3"}, "spec": {"replicas": 4}}


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        (OBJECT, []),
        (
            {"spec": {"replicas": -1}},
            [".spec.replicas: Invalid value: -1: should be a non-negative integer"],
        ),
        (
            {"spec": {"replicas": 2**31}, "status": {"replicas": -2}},
            [
                ".spec.replicas: Invalid value: 2147483648: should be less than or equal to "
                "2147483647",
                ".status.replicas: Invalid value: -2: should be a non-negative integer",
            ],
        ),
        (
            {"status": {"selector": 5}},
            [
                '.status.selector: Invalid value: "": .status.selector accessor error: 5 is '
                "of the type int64, expected string"
            ],
        ),
    ],
)
def test_validate_scale_paths(document, expected):
    found = crscale.validate_scale_paths(document, PATHS)
    assert [str(error) for error in found] == expected


@pytest.fixture
def stack(api, clock) -> CrdStack:
    built = CrdStack(api, clock)
    built.create_crd()
    return built


def _scale_url(name: str) -> str:
    return WIDGETS.format(ns="a") + f"/{name}/scale"


def test_get_put_and_patch_the_scale(stack):
    body = widget("w", "a", spec={"replicas": 1, "color": "red"})
    assert stack.http.post(WIDGETS.format(ns="a"), json=body).status_code == 201
    got = stack.http.get(_scale_url("w"))
    assert got.status_code == 200
    scale = got.json()
    assert scale["apiVersion"] == "autoscaling/v1"
    assert scale["kind"] == "Scale"
    assert scale["spec"] == {"replicas": 1}
    assert scale["status"] == {"replicas": 0}
    scale["spec"]["replicas"] = 3
    put = stack.http.put(_scale_url("w"), json=scale)
    assert put.status_code == 200
    assert put.json()["spec"] == {"replicas": 3}
    stored = stack.http.get(WIDGETS.format(ns="a") + "/w").json()
    assert stored["spec"] == {"replicas": 3, "color": "red"}
    assert stored["metadata"]["generation"] == 2
    merge = stack.http.patch(
        _scale_url("w"),
        json={"spec": {"replicas": 5}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert merge.json()["spec"] == {"replicas": 5}
    json_patch = stack.http.patch(
        _scale_url("w"),
        json=[{"op": "replace", "path": "/spec/replicas", "value": 0}],
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert json_patch.json()["spec"] == {}  # replicas 0 is omitted, as Go's omitempty
    assert stack.http.get(WIDGETS.format(ns="a") + "/w").json()["spec"]["replicas"] == 0
    # A stale resourceVersion in the Scale is a conflict.
    scale["spec"]["replicas"] = 2
    stale = stack.http.put(_scale_url("w"), json=scale)
    assert stale.status_code == 409
    assert stale.json()["reason"] == "Conflict"


def test_scale_status_and_selector_come_from_the_status_paths(stack):
    body = widget("w", "a", spec={"replicas": 2})
    stack.http.post(WIDGETS.format(ns="a"), json=body)
    current = stack.http.get(WIDGETS.format(ns="a") + "/w").json()
    current["status"] = {"replicas": 2, "selector": "app=w"}
    assert stack.http.put(WIDGETS.format(ns="a") + "/w/status", json=current).status_code == 200
    assert stack.http.get(_scale_url("w")).json()["status"] == {
        "replicas": 2,
        "selector": "app=w",
    }


def test_scale_errors_as_upstream(stack):
    stack.http.post(WIDGETS.format(ns="a"), json=widget("bare", "a", spec={}))
    missing = stack.http.get(_scale_url("bare"))
    assert missing.status_code == 500
    assert missing.json()["message"] == (
        'Internal error occurred: the spec replicas field ".spec.replicas" does not exist'
    )
    empty = stack.http.patch(
        _scale_url("bare"),
        json={"metadata": {"labels": {"a": "b"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert empty.status_code == 400
    assert empty.json()["message"] == 'the spec replicas field ".spec.replicas" cannot be empty'
    # The object's schema still applies to the replicas a Scale sets.
    too_many = stack.http.patch(
        _scale_url("bare"),
        json={"spec": {"replicas": 11}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert too_many.status_code == 422
    assert too_many.json()["message"] == (
        'Widget.example.com "bare" is invalid: spec.replicas: Invalid value: 11: '
        "spec.replicas in body should be less than or equal to 10"
    )
    assert stack.http.get(_scale_url("nothere")).status_code == 404


def test_discovery_lists_the_scale_subresource(stack):
    resources = stack.http.get("/apis/example.com/v1").json()["resources"]
    scale = next(r for r in resources if r["name"] == "widgets/scale")
    assert scale["group"] == "autoscaling"
    assert scale["version"] == "v1"
    assert scale["kind"] == "Scale"
    assert sorted(scale["verbs"]) == ["get", "patch", "update"]
