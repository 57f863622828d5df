"""A CRD's deletion as v1.32 does it, through the HTTP app and the two controllers:

* ``apiextensions-apiserver/pkg/registry/customresourcedefinition/etcd.go`` (``REST.Delete``):
  the first DELETE marks the CRD (deletionTimestamp, the
  ``customresourcecleanup.apiextensions.k8s.io`` finalizer, ``Terminating=True``
  ``InstanceDeletionPending``) and answers it; its own precondition texts;
* ``pkg/apiserver/customresource_handler.go`` (``serveResource``): a create while the
  CRD terminates is a 405 ``create not allowed while custom resource definition is
  terminating``; reads and deletes still work; ``customresource_discovery_controller.go``
  lists only ``delete, deletecollection, get, list, watch``;
* ``pkg/controller/finalizer/crd_finalizer.go`` (``sync``, ``deleteInstances``): the
  instances of every namespace are deleted, then the finalizer is removed and the CRD
  goes; a CR held by its own finalizer keeps the CRD Terminating
  (``InstanceDeletionInProgress``, then after a minute ``InstanceDeletionCheck``); a CRD
  never established is let go without listing; the update handler ignores changes of the
  Terminating condition alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api.apiextensions import (
    CUSTOM_RESOURCE_CLEANUP_FINALIZER,
    CustomObject,
    CustomResourceDefinition,
    CustomResourceDefinitionStatus,
)
from kubeprio.api.meta import Condition, ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.apiserver.crinstances import StoredCustomResources
from kubeprio.apiserver.http import KubeApp
from kubeprio.controllers.crdfinalizer import changed_beyond_terminating
from kubeprio.store.interface import KeyPrefix
from tests.unit.controllers.crdstack import CRD_NAME, CRD_URL, WIDGETS, CrdStack, widget


@pytest.fixture
def stack(api, clock) -> CrdStack:
    return CrdStack(api, clock)


def _add_widgets(stack: CrdStack) -> None:
    for ns, name in (("a", "w1"), ("a", "w2"), ("b", "w3")):
        created = stack.http.post(WIDGETS.format(ns=ns), json=widget(name, ns, spec={}))
        assert created.status_code == 201, created.json()


def test_delete_marks_the_crd_and_answers_it(stack):
    stack.create_crd()
    before = stack.http.get(CRD_URL).json()
    assert "finalizers" not in before["metadata"]  # added by the delete, not on create
    response = stack.http.delete(CRD_URL)
    assert response.status_code == 200
    body = response.json()
    assert body["kind"] == "CustomResourceDefinition"
    assert body["metadata"]["deletionTimestamp"]
    assert body["metadata"]["finalizers"] == [CUSTOM_RESOURCE_CLEANUP_FINALIZER]
    assert body["metadata"]["generation"] == before["metadata"]["generation"]
    assert "deletionGracePeriodSeconds" not in body["metadata"]
    terminating = [c for c in body["status"]["conditions"] if c["type"] == "Terminating"]
    assert terminating == [
        {
            "type": "Terminating",
            "status": "True",
            "lastTransitionTime": body["metadata"]["deletionTimestamp"],
            "reason": "InstanceDeletionPending",
            "message": "CustomResourceDefinition marked for deletion; CustomResource "
            "deletion will begin soon",
        }
    ]
    assert stack.http.get(CRD_URL).status_code == 200


def test_delete_checks_the_crd_rests_own_preconditions(stack):
    stack.create_crd()
    uid = stack.http.get(CRD_URL).json()["metadata"]["uid"]
    response = stack.http.request("DELETE", CRD_URL, json={"preconditions": {"uid": "other"}})
    assert response.status_code == 409
    assert response.json()["message"] == (
        "Operation cannot be fulfilled on customresourcedefinitions.apiextensions.k8s.io "
        f'"{CRD_NAME}": Precondition failed: UID in precondition: other, UID in object meta: {uid}'
    )
    assert "deletionTimestamp" not in stack.http.get(CRD_URL).json()["metadata"]


def test_a_terminating_crd_refuses_creates_but_serves_the_rest(stack):
    stack.create_crd()
    _add_widgets(stack)
    stack.http.delete(CRD_URL)  # the finalizer has not run yet
    refused = stack.http.post(WIDGETS.format(ns="a"), json=widget("new", "a", spec={}))
    assert refused.status_code == 405
    assert refused.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "create not allowed while custom resource definition is terminating",
        "reason": "MethodNotAllowed",
        "details": {"group": "example.com", "kind": "widgets"},
        "code": 405,
    }
    listed = stack.http.get(WIDGETS.format(ns="a"))
    assert [item["metadata"]["name"] for item in listed.json()["items"]] == ["w1", "w2"]
    assert stack.http.delete(WIDGETS.format(ns="a") + "/w1").status_code == 200
    resources = stack.http.get("/apis/example.com/v1").json()["resources"]
    widgets = next(r for r in resources if r["name"] == "widgets")
    assert sorted(widgets["verbs"]) == ["delete", "deletecollection", "get", "list", "watch"]


def test_the_finalizer_deletes_every_instance_then_lets_the_crd_go(stack):
    stack.create_crd()
    _add_widgets(stack)
    stack.http.delete(CRD_URL)
    stack.settle()
    assert stack.crd() is None
    assert stack.http.get(CRD_URL).status_code == 404
    # Its resources are no longer served, and nothing of them is left in storage.
    assert stack.http.get(WIDGETS.format(ns="a")).status_code == 404
    assert stack.api.store.list(KeyPrefix("widgets.example.com"))[0] == []


def test_a_stuck_instance_keeps_the_crd_terminating(stack):
    stack.create_crd()
    held = widget("held", "a", spec={}, metadata={"finalizers": ["example.com/keep"]})
    assert stack.http.post(WIDGETS.format(ns="a"), json=held).status_code == 201
    stack.http.delete(CRD_URL)
    stack.settle()
    marked = stack.http.get(WIDGETS.format(ns="a") + "/held").json()
    assert marked["metadata"]["deletionTimestamp"]
    assert stack.terminating() == (
        "True",
        "InstanceDeletionInProgress",
        "CustomResource deletion is in progress",
    )
    # Polled every 5 s for a minute, then reported and retried.
    for _ in range(12):
        stack.clock.advance(5)
        stack.settle()
    assert stack.terminating() == (
        "True",
        "InstanceDeletionCheck",
        "could not confirm zero CustomResources remaining: timed out waiting for the condition",
    )
    assert stack.crd() is not None
    # The CR's own finalizer goes: the CR goes, then (at the next poll) the CRD.
    marked["metadata"]["finalizers"] = []
    assert stack.http.put(WIDGETS.format(ns="a") + "/held", json=marked).status_code == 200
    for _ in range(3):
        stack.clock.advance(5)
        stack.settle()
    assert stack.crd() is None


def test_a_crd_never_established_goes_without_listing(stack):
    stack.create_crd(establish=False)
    listed: list[str] = []
    stack.finalizer.instances = _Recording(stack.instances, listed)
    stack.api.delete_object(CustomResourceDefinition, CRD_NAME)
    stack.crds.pump()
    stack.finalizer.run_once()
    assert stack.crd() is None
    assert listed == []


class _Recording:
    """The real storage access, with the CRDs whose instances were listed noted."""

    def __init__(self, inner: StoredCustomResources, listed: list[str]) -> None:
        self.inner = inner
        self.listed = listed

    def list_instances(self, crd: CustomResourceDefinition) -> list[CustomObject]:
        self.listed.append(crd.metadata.name or "")
        return self.inner.list_instances(crd)

    def delete_collection(self, crd: CustomResourceDefinition, namespace: str) -> None:
        self.inner.delete_collection(crd, namespace)


def _terminating_crd(rv: str, reason: str, **meta: Any) -> CustomResourceDefinition:
    return CustomResourceDefinition(
        metadata=ObjectMeta(name=CRD_NAME, resource_version=rv, **meta),
        status=CustomResourceDefinitionStatus(
            conditions=(Condition(type="Terminating", status="True", reason=reason),)
        ),
    )


@pytest.mark.parametrize(
    ("old", "new", "requeue"),
    [
        # A resync (same resourceVersion) is always looked at again.
        (_terminating_crd("5", "A"), _terminating_crd("5", "A"), True),
        # Only the Terminating condition changed (this controller wrote it): not queued.
        (_terminating_crd("5", "A"), _terminating_crd("6", "B"), False),
        # Anything else changed: queued.
        (_terminating_crd("5", "A"), _terminating_crd("6", "A", labels={"x": "y"}), True),
    ],
)
def test_update_handler_ignores_its_own_condition_writes(old, new, requeue):
    assert changed_beyond_terminating(old, new) is requeue


def test_a_write_conflict_is_retried_not_dropped(stack):
    """The cache behind the store: the status write conflicts and the key is requeued
    with backoff (kubeprio's informers have no periodic resync to fall back on)."""
    stack.create_crd()
    stack.http.delete(CRD_URL)
    stack.crds.pump()  # the cache holds the marked CRD...
    current = stack.api.get(CustomResourceDefinition, CRD_NAME)
    relabelled = evolve(current, metadata=evolve(current.metadata, labels={"x": "y"}))
    stack.api.update(relabelled)  # ...and the store is one write ahead of it
    stack.finalizer.queue.add(CRD_NAME)
    stack.finalizer.run_once()
    assert stack.finalizer.queue.num_requeues(CRD_NAME) == 1
    assert stack.crd() is not None
    stack.clock.advance(1)
    stack.settle()
    assert stack.crd() is None


def test_each_instance_the_finalizer_removes_replenishes_quota(stack):
    """The quota controller hears of every removal (``apiserver.customquota``), as of the
    REST's deletes, so ``count/widgets.example.com`` is recounted."""
    kube: KubeApp = stack.http.app.state.kube  # type: ignore[attr-defined]
    stack.instances.counts = kube.custom_counts
    heard: list[tuple[str, str]] = []
    kube.custom_counts.subscribe(lambda namespace, name: heard.append((namespace, name)))
    stack.create_crd()
    _add_widgets(stack)
    stack.http.delete(CRD_URL)
    stack.settle()
    assert stack.crd() is None
    assert sorted(heard) == [
        ("a", "count/widgets.example.com"),
        ("a", "count/widgets.example.com"),
        ("b", "count/widgets.example.com"),
    ]
