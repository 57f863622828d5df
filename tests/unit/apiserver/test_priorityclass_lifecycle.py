"""PriorityClass lifecycle through the API service (issue 2 section 3; semantics 1.4/1.5).

* the system classes exist from the start (``scheduling/bootstrap-system-priority-classes``
  post-start hook, ``pkg/registry/scheduling/rest/storage_scheduling.go``);
* they cannot be deleted (``REST.Delete`` in
  ``pkg/registry/scheduling/priorityclass/storage/storage.go``);
* other classes can, and existing pods keep their priority;
* rejected writes leave the store untouched; whole Status messages are upstream's.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from kubeprio.admission.defaults import default_chain
from kubeprio.api import errors
from kubeprio.api.core import Pod
from kubeprio.api.scheduling import PriorityClass
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.client.protocol import DeleteRequest
from kubeprio.store.memory import MemoryStore
from tests.builders import pod, priority_class
from tests.conftest import ManualClock


@pytest.fixture
def kapi(clock: ManualClock) -> ApiService:
    store = MemoryStore()
    return ApiService(
        store,
        clock=clock,
        rng=random.Random(3),
        admission=default_chain(StoreListers(store)),
    )


def test_system_classes_exist_from_the_start(kapi: ApiService) -> None:
    classes = {pc.metadata.name: pc for pc in kapi.list(PriorityClass).items}
    assert classes["system-node-critical"].value == 2_000_001_000
    assert classes["system-cluster-critical"].value == 2_000_000_000
    for name in ("system-node-critical", "system-cluster-critical"):
        assert not classes[name].global_default
        assert classes[name].preemption_policy == "PreemptLowerPriority"


@pytest.mark.parametrize("name", ["system-node-critical", "system-cluster-critical"])
@pytest.mark.parametrize(
    "options",
    [None, DeleteRequest(grace_period_seconds=0), DeleteRequest(dry_run=True)],
    ids=["default", "grace 0", "dry run"],
)
def test_system_classes_cannot_be_deleted(
    kapi: ApiService, name: str, options: DeleteRequest | None
) -> None:
    revision = kapi.store.current_revision()
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.delete(PriorityClass, name, options=options)
    assert raised.value.message == (
        f'priorityclasses.scheduling.k8s.io "{name}" is forbidden: '
        "this is a system priority class and cannot be deleted"
    )
    assert kapi.store.current_revision() == revision


def test_deleting_a_class_leaves_existing_pods_their_priority(kapi: ApiService) -> None:
    kapi.create(priority_class("batch", 300))
    created = kapi.create(pod("job-1").priority_class("batch").build())
    kapi.delete(PriorityClass, "batch")
    stored = kapi.get(Pod, "job-1", "default")
    assert stored == created
    assert stored.spec is not None
    assert stored.spec.priority == 300
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.create(pod("job-2").priority_class("batch").build())
    assert (
        raised.value.message
        == 'pods "job-2" is forbidden: no PriorityClass with name batch was found'
    )


def test_deleting_the_default_class_means_priority_zero(kapi: ApiService) -> None:
    """TestDefaultPriority 'delete default priority class', end to end."""
    kapi.create(priority_class("default1", 1000, global_default=True))
    kapi.delete(PriorityClass, "default1")
    created = kapi.create(pod("p").build())
    assert created.spec is not None
    assert (created.spec.priority_class_name, created.spec.priority) == (None, 0)


@pytest.mark.parametrize(
    ("obj", "code", "message"),
    [
        (
            priority_class("tier1", 1_000_000_001),
            422,
            'PriorityClass.scheduling.k8s.io "tier1" is invalid: value: Forbidden: maximum '
            "allowed value of a user defined priority is 1000000000",
        ),
        (
            priority_class("system-node-critical", 2_000_001_000),
            409,
            'priorityclasses.scheduling.k8s.io "system-node-critical" already exists',
        ),
        (
            priority_class("system-node-critical", 5),
            422,
            'PriorityClass.scheduling.k8s.io "system-node-critical" is invalid: metadata.name: '
            "Forbidden: priority class names with 'system-' prefix are reserved for system use "
            "only. error: value of system-node-critical PriorityClass must be 2000001000",
        ),
        (
            priority_class("system-custom", 5),
            422,
            'PriorityClass.scheduling.k8s.io "system-custom" is invalid: metadata.name: '
            "Forbidden: priority class names with 'system-' prefix are reserved for system use "
            "only. error: system-custom is not a known system priority class",
        ),
        (
            priority_class("tier1", 5, policy="Sometimes"),
            422,
            'PriorityClass.scheduling.k8s.io "tier1" is invalid: preemptionPolicy: Unsupported '
            'value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
        ),
        (
            priority_class("second-default", 5, global_default=True),
            403,
            'priorityclasses.scheduling.k8s.io "second-default" is forbidden: PriorityClass '
            "first-default is already marked as default. Only one default can exist",
        ),
    ],
    ids=[
        "above 1e9",
        "system class exists",
        "system class with another value",
        "reserved prefix",
        "bad policy",
        "second default",
    ],
)
def test_bad_priority_classes_are_refused_and_nothing_is_stored(
    kapi: ApiService, obj: PriorityClass, code: int, message: str
) -> None:
    kapi.create(priority_class("first-default", 1, global_default=True))
    revision = kapi.store.current_revision()
    with pytest.raises(errors.StatusError) as raised:
        kapi.create(obj)
    assert (raised.value.status.code, raised.value.message) == (code, message)
    assert kapi.store.current_revision() == revision


def test_value_without_a_value_is_zero(kapi: ApiService) -> None:
    """Upstream's ``value`` is a plain int32: an absent value is stored as 0."""
    created = kapi.create(PriorityClass(metadata=priority_class("zero", 0).metadata))
    assert created.value == 0
    assert created.preemption_policy == "PreemptLowerPriority"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"value": 101},
            'PriorityClass.scheduling.k8s.io "tier1" is invalid: value: Forbidden: may not be '
            "changed in an update.",
        ),
        (
            {"value": None},
            'PriorityClass.scheduling.k8s.io "tier1" is invalid: value: Forbidden: may not be '
            "changed in an update.",
        ),
        (
            {"preemption_policy": "Never"},
            'PriorityClass.scheduling.k8s.io "tier1" is invalid: preemptionPolicy: Invalid '
            'value: "Never": field is immutable',
        ),
    ],
    ids=["change value", "remove value", "change preemptionPolicy"],
)
def test_immutable_fields_on_update(
    kapi: ApiService, change: dict[str, object], message: str
) -> None:
    created = kapi.create(priority_class("tier1", 100))
    with pytest.raises(errors.InvalidError) as raised:
        kapi.update(dataclasses.replace(created, **change))  # type: ignore[arg-type]
    assert raised.value.message == message


def test_description_and_global_default_are_updatable(kapi: ApiService) -> None:
    created = kapi.create(priority_class("tier1", 100))
    updated = kapi.update(dataclasses.replace(created, description="new", global_default=True))
    assert (updated.description, updated.global_default) == ("new", True)
    cleared = kapi.update(dataclasses.replace(updated, description=None, global_default=False))
    assert (cleared.description, cleared.global_default) == (None, False)
