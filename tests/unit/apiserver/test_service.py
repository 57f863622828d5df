"""The in-process API service: the write path, deletion, binding, eviction, list and watch.

Each behaviour is upstream's (v1.35 line), cited per test: the generic registry store
(``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``), graceful
deletion (``pkg/registry/rest/delete.go`` ``BeforeDelete`` and the pod strategy's
``CheckGracefulDelete``), ``pods/binding`` and ``pods/eviction``
(``pkg/registry/core/pod/storage/{storage,eviction}.go``), NamespaceLifecycle
admission, list/watch with selectors and continue tokens, and the error texts of
``k8s.io/apimachinery/pkg/api/errors``. Every rejected write is checked not to have
changed the store.
"""

from __future__ import annotations

import dataclasses
import random
import re
from typing import Any

import pytest

from kubeprio.admission.chain import AdmissionChain
from kubeprio.api import errors
from kubeprio.api import manifest as manifest_module
from kubeprio.api.apps import Deployment, DeploymentSpec
from kubeprio.api.core import (
    Binding,
    Event,
    Namespace,
    ObjectReference,
    Pod,
    PodCondition,
    PodStatus,
)
from kubeprio.api.meta import DeleteOptions, ObjectMeta, Preconditions
from kubeprio.api.policy import (
    Eviction,
    PodDisruptionBudget,
    PodDisruptionBudgetSpec,
    PodDisruptionBudgetStatus,
)
from kubeprio.apiserver.service import ApiService
from kubeprio.client.protocol import DeleteRequest, PatchType, WatchEventType
from kubeprio.clock import rfc3339
from kubeprio.store.memory import MemoryStore
from tests.builders import pod
from tests.conftest import EPOCH, ManualClock
from tests.manifests import create, deployment_doc, pdb_doc

# --- helpers --------------------------------------------------------------------------------


def _running(
    api: ApiService, name: str, node: str = "n1", *, ready: bool = True, **labels: str
) -> Pod:
    """A pod bound to ``node`` and reported Running (and Ready) by its kubelet."""
    api.create(pod(name).labels(**labels).build() if labels else pod(name).build())
    api.bind(
        Binding(
            metadata=ObjectMeta(name=name, namespace="default"),
            target=ObjectReference(kind="Node", name=node),
        )
    )
    current = api.get(Pod, name, "default")
    status = current.status or PodStatus()
    conditions = (
        *(status.conditions or ()),
        PodCondition(type="Ready", status="True" if ready else "False"),
    )
    return api.update_status(
        dataclasses.replace(
            current, status=dataclasses.replace(status, phase="Running", conditions=conditions)
        )
    )


def _snapshot(api: ApiService) -> tuple[int, list[Any]]:
    return api.store.current_revision(), api.list(Pod).items


def _eviction(name: str, **delete_options: Any) -> Eviction:
    options = DeleteOptions(**delete_options) if delete_options else None
    return Eviction(metadata=ObjectMeta(name=name, namespace="default"), delete_options=options)


def _budget(
    api: ApiService,
    *,
    allowed: int,
    desired: int = 2,
    current: int = 2,
    policy: str | None = None,
    name: str = "budget",
    **labels: str,
) -> PodDisruptionBudget:
    """A PDB selecting ``labels`` whose status the disruption controller has written."""
    created = api.create(
        PodDisruptionBudget(
            metadata=ObjectMeta(name=name, namespace="default"),
            spec=PodDisruptionBudgetSpec(
                min_available=1, selector=_selector(labels), unhealthy_pod_eviction_policy=policy
            ),
        )
    )
    status = PodDisruptionBudgetStatus(
        observed_generation=created.metadata.generation,
        disruptions_allowed=allowed,
        desired_healthy=desired,
        current_healthy=current,
        expected_pods=current,
    )
    return api.update_status(dataclasses.replace(created, status=status))


def _selector(labels: dict[str, str]) -> Any:
    from kubeprio.api.meta import LabelSelector

    return LabelSelector(match_labels=labels or {"app": "web"})


# --- create --------------------------------------------------------------------------------


def test_create_stamps_system_fields_defaults_and_initial_status(api: ApiService) -> None:
    """``BeforeCreate`` + pod ``PrepareForCreate``: uid, timestamp, Pending, QoS class."""
    created = api.create(pod("web").requests(cpu="100m").build())
    assert created.metadata.uid
    assert created.metadata.creation_timestamp == rfc3339(EPOCH)
    assert created.metadata.resource_version == str(api.store.current_revision())
    assert created.status == PodStatus(phase="Pending", qos_class="Burstable")
    assert created.spec is not None
    assert (created.spec.scheduler_name, created.spec.termination_grace_period_seconds) == (
        "default-scheduler",
        30,
    )


def test_generate_name_appends_five_random_characters(api: ApiService) -> None:
    created = api.create(
        Pod(
            metadata=ObjectMeta(generate_name="web-", namespace="default"),
            spec=pod("x").build().spec,
        )
    )
    name = created.metadata.name or ""
    assert name.startswith("web-")
    assert len(name) == len("web-") + 5


def test_create_twice_is_already_exists(api: ApiService) -> None:
    api.create(pod("web").build())
    before = _snapshot(api)
    with pytest.raises(errors.AlreadyExistsError) as caught:
        api.create(pod("web").build())
    assert caught.value.message == 'pods "web" already exists'
    assert caught.value.status.code == 409
    assert _snapshot(api) == before


def test_dry_run_create_returns_the_object_without_storing_it(api: ApiService) -> None:
    before = _snapshot(api)
    result = api.create(pod("web").build(), dry_run=True)
    assert result.metadata.name == "web"
    assert _snapshot(api) == before


def test_create_in_missing_namespace_is_not_found(api: ApiService) -> None:
    """NamespaceLifecycle admission: ``namespaces "nope" not found``."""
    before = api.store.current_revision()
    with pytest.raises(errors.NotFoundError) as caught:
        api.create(pod("web", namespace="nope").build())
    assert caught.value.message == 'namespaces "nope" not found'
    assert api.store.current_revision() == before


def test_auto_create_namespaces_creates_the_namespace(
    store: MemoryStore, clock: ManualClock, rng: random.Random
) -> None:
    api = ApiService(
        store, clock=clock, rng=rng, admission=AdmissionChain(), auto_create_namespaces=True
    )
    api.create(pod("web", namespace="team-a").build())
    assert api.get(Namespace, "team-a").status.phase == "Active"  # type: ignore[union-attr]


def test_create_in_terminating_namespace_is_forbidden(api: ApiService) -> None:
    """NamespaceLifecycle: ``NewForbidden(resource, name, ...)`` for a terminating namespace."""
    api.create(Namespace(metadata=ObjectMeta(name="old", finalizers=("example.com/hold",))))
    api.delete(Namespace, "old")
    with pytest.raises(errors.ForbiddenError) as caught:
        api.create(pod("web", namespace="old").build())
    assert caught.value.message == (
        'pods "web" is forbidden: unable to create new content in namespace old because it is '
        "being terminated"
    )


def test_invalid_object_is_one_422_with_every_cause(api: ApiService) -> None:
    bad = pod("Web").spec(restart_policy="Sometimes").build()
    before = _snapshot(api)
    with pytest.raises(errors.InvalidError) as caught:
        api.create(bad)
    assert caught.value.status.code == 422
    assert [c.field for c in caught.value.status.details.causes or ()] == [
        "metadata.name",
        "spec.restartPolicy",
    ]  # type: ignore[union-attr]
    assert _snapshot(api) == before


# --- update, status, generation --------------------------------------------------------------


def test_stale_resource_version_is_a_conflict_with_upstream_text(api: ApiService) -> None:
    """``OptimisticLockErrorMsg`` via ``NewConflict``."""
    created = api.create(pod("x").labels(a="1").build())
    api.update(
        dataclasses.replace(
            created, metadata=dataclasses.replace(created.metadata, labels={"a": "2"})
        )
    )
    before = _snapshot(api)
    with pytest.raises(errors.ConflictError) as caught:
        api.update(
            dataclasses.replace(
                created, metadata=dataclasses.replace(created.metadata, labels={"a": "3"})
            )
        )
    assert caught.value.message == (
        'Operation cannot be fulfilled on pods "x": the object has been modified; please apply your '
        "changes to the latest version and try again"
    )
    assert caught.value.status.reason == "Conflict"
    assert _snapshot(api) == before


def test_update_without_resource_version_is_unconditional(api: ApiService) -> None:
    created = api.create(pod("x").build())
    unconditional = dataclasses.replace(
        created,
        metadata=dataclasses.replace(created.metadata, resource_version=None, labels={"a": "1"}),
    )
    updated = api.update(unconditional)
    assert updated.metadata.labels == {"a": "1"}
    assert int(updated.metadata.resource_version or 0) > int(created.metadata.resource_version or 0)


def test_noop_update_does_not_write(api: ApiService) -> None:
    created = api.create(pod("x").build())
    before = api.store.current_revision()
    assert api.update(created) == created
    assert api.store.current_revision() == before


def test_update_of_missing_object_is_not_found(api: ApiService) -> None:
    with pytest.raises(errors.NotFoundError) as caught:
        api.update(pod("ghost").build())
    assert caught.value.message == 'pods "ghost" not found'


def test_main_update_keeps_status_and_status_update_keeps_spec(api: ApiService) -> None:
    """Status subresource split (``PrepareForUpdate`` of the pod and pod-status strategies)."""
    created = api.create(pod("x").build())
    assert created.spec is not None
    running = dataclasses.replace(
        created, status=PodStatus(phase="Running", qos_class="BestEffort")
    )
    after_main = api.update(
        dataclasses.replace(
            running, metadata=dataclasses.replace(running.metadata, labels={"a": "1"})
        )
    )
    assert after_main.status == created.status
    after_status = api.update_status(
        dataclasses.replace(
            after_main,
            spec=dataclasses.replace(created.spec, node_name="n1"),
            status=running.status,
        )
    )
    assert after_status.status == running.status
    assert after_status.spec == created.spec


def test_generation_counts_spec_changes_only(api: ApiService) -> None:
    """``metadata.generation``: 1 on create, +1 per spec change, untouched by metadata and status."""
    created = create(api, deployment_doc())
    assert created.metadata.generation == 1
    relabelled = api.update(
        dataclasses.replace(
            created, metadata=dataclasses.replace(created.metadata, labels={"team": "a"})
        )
    )
    assert relabelled.metadata.generation == 1
    spec = relabelled.spec or DeploymentSpec()
    scaled = api.update(dataclasses.replace(relabelled, spec=dataclasses.replace(spec, replicas=3)))
    assert scaled.metadata.generation == 2
    from kubeprio.api.apps import DeploymentStatus

    status_written = api.update_status(
        dataclasses.replace(scaled, status=DeploymentStatus(observed_generation=2, replicas=3))
    )
    assert status_written.metadata.generation == 2


def test_a_replace_without_the_defaulted_fields_keeps_the_generation(api: ApiService) -> None:
    """Upstream decodes (and so defaults) the body before ``PrepareForUpdate`` compares the
    specs: replacing a Deployment with its own manifest, which leaves out every defaulted
    field (strategy, revisionHistoryLimit, the template's dnsPolicy, ...), changes nothing."""
    created = create(api, deployment_doc())
    manifest = manifest_module.decode_object(deployment_doc())
    assert isinstance(manifest, Deployment)
    replaced = api.update(
        dataclasses.replace(
            manifest,
            metadata=dataclasses.replace(
                manifest.metadata, resource_version=created.metadata.resource_version
            ),
        )
    )
    assert replaced.metadata.generation == 1
    assert replaced.spec == created.spec


def test_status_update_is_validated_with_status_rules(api: ApiService) -> None:
    created = create(api, pdb_doc())
    with pytest.raises(errors.InvalidError) as caught:
        api.update_status(
            dataclasses.replace(created, status=PodDisruptionBudgetStatus(disruptions_allowed=-1))
        )
    assert caught.value.message == (
        'PodDisruptionBudget.policy "b" is invalid: status.disruptionsAllowed: Invalid value: -1: '
        "must be greater than or equal to 0"
    )


# --- patch ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("patch_type", "body"),
    [
        (PatchType.MERGE_PATCH, {"metadata": {"labels": {"tier": "web"}}}),
        (
            PatchType.JSON_PATCH,
            [{"op": "add", "path": "/metadata/labels", "value": {"tier": "web"}}],
        ),
        (PatchType.STRATEGIC_MERGE_PATCH, {"metadata": {"labels": {"tier": "web"}}}),
    ],
    ids=["merge", "json", "strategic"],
)
def test_patch_types(api: ApiService, patch_type: PatchType, body: object) -> None:
    api.create(pod("x").build())
    patched = api.patch(Pod, "x", body, namespace="default", patch_type=patch_type)
    assert patched.metadata.labels == {"tier": "web"}


def test_strategic_patch_merges_containers_by_name(api: ApiService) -> None:
    api.create(pod("x").build())
    patched = api.patch(
        Pod,
        "x",
        {"spec": {"containers": [{"name": "c", "image": "busybox:2"}]}},
        namespace="default",
        patch_type=PatchType.STRATEGIC_MERGE_PATCH,
    )
    assert patched.spec is not None
    assert patched.spec.containers is not None
    assert [(c.name, c.image) for c in patched.spec.containers] == [("c", "busybox:2")]


def test_patch_of_status_subresource(api: ApiService) -> None:
    api.create(pod("x").build())
    patched = api.patch(
        Pod,
        "x",
        {"status": {"nominatedNodeName": "n1"}, "spec": {"nodeName": "n9"}},
        namespace="default",
        subresource="status",
    )
    assert patched.status is not None
    assert patched.status.nominated_node_name == "n1"
    assert patched.spec is not None
    assert patched.spec.node_name is None


def test_patch_that_does_not_decode_is_a_400_naming_the_field(api: ApiService) -> None:
    api.create(pod("x").build())
    before = _snapshot(api)
    with pytest.raises(errors.BadRequestError) as caught:
        api.patch(Pod, "x", {"spec": {"priority": "high"}}, namespace="default")
    assert caught.value.message == (
        'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct '
        "field PodSpec.spec.priority of type int32"
    )
    assert _snapshot(api) == before


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"metadata": {"name": "y"}},
            "the name of the object (y) does not match the name on the URL (x)",
        ),
        ({"metadata": None}, "the name of the object () does not match the name on the URL (x)"),
        (
            {"metadata": {"namespace": "kube-system"}},
            "the namespace of the object (kube-system) does not match the namespace on the request (default)",
        ),
    ],
    ids=["renamed", "metadata removed", "other namespace"],
)
def test_patch_may_not_move_the_object(api: ApiService, body: object, message: str) -> None:
    """Regression: ``checkName`` makes these a 400 (they used to look up another object, 404)."""
    api.create(pod("x").build())
    before = _snapshot(api)
    with pytest.raises(errors.BadRequestError) as caught:
        api.patch(Pod, "x", body, namespace="default")
    assert caught.value.message == message
    assert _snapshot(api) == before


def test_json_patch_test_failure_changes_nothing(api: ApiService) -> None:
    api.create(pod("x").build())
    before = _snapshot(api)
    with pytest.raises(errors.StatusError):
        api.patch(
            Pod,
            "x",
            [{"op": "test", "path": "/metadata/name", "value": "y"}],
            namespace="default",
            patch_type=PatchType.JSON_PATCH,
        )
    assert _snapshot(api) == before


# --- graceful deletion -------------------------------------------------------------------------


def test_unscheduled_pod_is_deleted_at_once(api: ApiService) -> None:
    """``CheckGracefulDelete``: an unbound pod has nothing to stop (period 0)."""
    api.create(pod("x").build())
    api.delete(Pod, "x", "default")
    with pytest.raises(errors.NotFoundError):
        api.get(Pod, "x", "default")


@pytest.mark.parametrize("phase", ["Succeeded", "Failed"])
def test_terminal_pod_is_deleted_at_once(api: ApiService, phase: str) -> None:
    running = _running(api, "x")
    api.update_status(
        dataclasses.replace(
            running, status=dataclasses.replace(running.status or PodStatus(), phase=phase)
        )
    )
    api.delete(Pod, "x", "default")
    assert api.list(Pod, "default").items == []


def test_bound_pod_gets_a_deletion_timestamp_and_stays(api: ApiService, clock: ManualClock) -> None:
    _running(api, "x")
    result = api.delete(Pod, "x", "default")
    assert result.metadata.deletion_timestamp == rfc3339(clock.now() + 30)
    assert result.metadata.deletion_grace_period_seconds == 30
    assert (
        api.get(Pod, "x", "default").metadata.deletion_timestamp
        == result.metadata.deletion_timestamp
    )


def test_shorter_grace_moves_the_deadline_back(api: ApiService, clock: ManualClock) -> None:
    """``BeforeDelete``: old deadline - old grace + new grace, only ever shorter."""
    _running(api, "x")
    first = api.delete(Pod, "x", "default")
    clock.advance(5)
    longer = api.delete(Pod, "x", "default", options=DeleteRequest(grace_period_seconds=60))
    assert longer == first
    shorter = api.delete(Pod, "x", "default", options=DeleteRequest(grace_period_seconds=10))
    assert shorter.metadata.deletion_timestamp == rfc3339(EPOCH + 10)
    assert shorter.metadata.deletion_grace_period_seconds == 10


def test_shortening_past_now_clamps_to_now_and_one_second(
    api: ApiService, clock: ManualClock
) -> None:
    _running(api, "x")
    api.delete(Pod, "x", "default")
    clock.advance(20)
    result = api.delete(Pod, "x", "default", options=DeleteRequest(grace_period_seconds=5))
    assert result.metadata.deletion_timestamp == rfc3339(clock.now())
    assert result.metadata.deletion_grace_period_seconds == 1


def test_grace_zero_removes_a_terminating_pod_after_marking_it(api: ApiService) -> None:
    """The kubelet's final delete: watchers see MODIFIED (grace 0) then DELETED."""
    _running(api, "x")
    api.delete(Pod, "x", "default")
    watch = api.watch(Pod, "default", resource_version=str(api.store.current_revision()))
    api.delete(Pod, "x", "default", options=DeleteRequest(grace_period_seconds=0))
    events = watch.poll()
    assert [e.type for e in events] == [WatchEventType.MODIFIED, WatchEventType.DELETED]
    assert events[0].object.metadata.deletion_grace_period_seconds == 0
    assert api.list(Pod, "default").items == []


def test_negative_grace_counts_as_one_second(api: ApiService, clock: ManualClock) -> None:
    _running(api, "x")
    result = api.delete(Pod, "x", "default", options=DeleteRequest(grace_period_seconds=-5))
    assert result.metadata.deletion_grace_period_seconds == 1
    assert result.metadata.deletion_timestamp == rfc3339(clock.now() + 1)


def test_finalizers_keep_a_deleted_object_until_removed(api: ApiService) -> None:
    created = api.create(
        dataclasses.replace(
            pod("x").build(),
            metadata=ObjectMeta(name="x", namespace="default", finalizers=("example.com/hold",)),
        )
    )
    marked = api.delete(Pod, "x", "default")
    assert marked.metadata.deletion_timestamp is not None
    assert marked.metadata.deletion_grace_period_seconds == 0
    released = dataclasses.replace(
        marked, metadata=dataclasses.replace(marked.metadata, finalizers=None)
    )
    api.update(released)
    assert api.list(Pod, "default").items == []
    assert created.metadata.finalizers == ("example.com/hold",)


def test_new_finalizers_are_forbidden_while_deleting(api: ApiService) -> None:
    api.create(
        dataclasses.replace(
            pod("x").build(),
            metadata=ObjectMeta(name="x", namespace="default", finalizers=("a.io/x",)),
        )
    )
    marked = api.delete(Pod, "x", "default")
    with pytest.raises(errors.InvalidError) as caught:
        api.update(
            dataclasses.replace(
                marked,
                metadata=dataclasses.replace(marked.metadata, finalizers=("a.io/x", "b.io/y")),
            )
        )
    assert (
        'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b.io/y"}'
        in caught.value.message
    )


def test_other_kinds_are_deleted_at_once(api: ApiService) -> None:
    create(api, deployment_doc())
    api.delete(Deployment, "d", "default")
    assert api.list(Deployment).items == []


@pytest.mark.parametrize(
    ("preconditions", "message"),
    [
        (
            Preconditions(uid="other"),
            'Operation cannot be fulfilled on Pod "x": the UID in the precondition (other) does not match '
            "the UID in record ({uid}). The object might have been deleted and then recreated",
        ),
        (
            Preconditions(resource_version="1"),
            'Operation cannot be fulfilled on Pod "x": the ResourceVersion in the precondition (1) does not '
            "match the ResourceVersion in record ({rv}). The object might have been modified",
        ),
    ],
    ids=["uid", "resourceVersion"],
)
def test_delete_preconditions_are_checked_first(
    api: ApiService, preconditions: Preconditions, message: str
) -> None:
    """``BeforeDelete``'s early check: the conflict names the kind, not the resource."""
    created = api.create(pod("x").build())
    before = _snapshot(api)
    with pytest.raises(errors.ConflictError) as caught:
        api.delete(Pod, "x", "default", options=DeleteRequest(preconditions=preconditions))
    assert caught.value.message == message.format(
        uid=created.metadata.uid, rv=created.metadata.resource_version
    )
    assert _snapshot(api) == before


def test_delete_with_unknown_propagation_policy_is_invalid(api: ApiService) -> None:
    api.create(pod("x").build())
    with pytest.raises(errors.InvalidError) as caught:
        api.delete(Pod, "x", "default", options=DeleteRequest(propagation_policy="Sideways"))
    assert caught.value.message == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": '
        'supported values: "Foreground", "Background", "Orphan", "nil"'
    )


def test_delete_of_missing_object_is_not_found(api: ApiService) -> None:
    with pytest.raises(errors.NotFoundError) as caught:
        api.delete(Pod, "ghost", "default")
    assert caught.value.message == 'pods "ghost" not found'


# --- binding ---------------------------------------------------------------------------------------


def _binding(name: str, node: str = "n1", **meta: Any) -> Binding:
    return Binding(
        metadata=ObjectMeta(name=name, namespace="default", **meta),
        target=ObjectReference(kind="Node", name=node),
    )


def test_bind_sets_node_and_pod_scheduled(api: ApiService, clock: ManualClock) -> None:
    api.create(pod("x").build())
    api.bind(_binding("x", annotations={"scheduler.example/score": "9"}))
    bound = api.get(Pod, "x", "default")
    assert bound.spec is not None
    assert bound.spec.node_name == "n1"
    assert bound.status is not None
    assert bound.status.conditions == (
        PodCondition(type="PodScheduled", status="True", last_transition_time=rfc3339(clock.now())),
    )
    assert bound.metadata.annotations == {"scheduler.example/score": "9"}


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (
            "bound",
            'Operation cannot be fulfilled on pods/binding "x": pod x is already assigned to node "n1"',
        ),
        (
            "deleting",
            'Operation cannot be fulfilled on pods/binding "x": pod x is being deleted, cannot be assigned to a host',
        ),
        (
            "gated",
            'Operation cannot be fulfilled on pods/binding "x": pod x has non-empty .spec.schedulingGates',
        ),
    ],
)
def test_bind_conflicts(api: ApiService, setup: str, message: str) -> None:
    """``setPodNodeAndMetadata`` refusals, wrapped as 409 on ``pods/binding``."""
    if setup == "bound":
        api.create(pod("x").build())
        api.bind(_binding("x"))
    elif setup == "deleting":
        api.create(
            dataclasses.replace(
                pod("x").build(),
                metadata=ObjectMeta(name="x", namespace="default", finalizers=("a.io/x",)),
            )
        )
        api.delete(Pod, "x", "default")
    else:
        gated = pod("x").build()
        assert gated.spec is not None
        api.create(
            dataclasses.replace(
                gated,
                spec=dataclasses.replace(
                    gated.spec, extra={"schedulingGates": [{"name": "example.com/wait"}]}
                ),
            )
        )
    before = _snapshot(api)
    with pytest.raises(errors.ConflictError) as caught:
        api.bind(_binding("x", node="n2"))
    assert caught.value.message == message
    assert _snapshot(api) == before


def test_bind_uid_precondition_is_a_storage_conflict(api: ApiService) -> None:
    created = api.create(pod("x").build())
    with pytest.raises(errors.ConflictError) as caught:
        api.bind(_binding("x", uid="not-the-uid"))
    assert caught.value.message == (
        'Operation cannot be fulfilled on pods "x": StorageError: invalid object, Code: 4, Key: '
        "/registry/pods/default/x, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in "
        f"precondition: not-the-uid, UID in object meta: {created.metadata.uid}"
    )


def test_bind_without_target_is_an_internal_error(api: ApiService) -> None:
    """``ValidatePodBinding`` errors are returned bare; the handler makes them a 500."""
    api.create(pod("x").build())
    with pytest.raises(errors.StatusError) as caught:
        api.bind(
            Binding(
                metadata=ObjectMeta(name="x", namespace="default"),
                target=ObjectReference(kind="Pod", name=""),
            )
        )
    assert caught.value.status.code == 500
    assert (
        caught.value.message
        == '[target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", target.name: Required value]'
    )


def test_bind_missing_pod_is_not_found(api: ApiService) -> None:
    with pytest.raises(errors.NotFoundError):
        api.bind(_binding("ghost"))


# --- eviction ------------------------------------------------------------------------------------


def test_eviction_without_budget_deletes_gracefully(api: ApiService) -> None:
    _running(api, "x", app="web")
    api.evict(_eviction("x"))
    assert api.get(Pod, "x", "default").metadata.deletion_grace_period_seconds == 30


def test_eviction_takes_one_disruption_and_records_the_pod(
    api: ApiService, clock: ManualClock
) -> None:
    _running(api, "x", app="web")
    _budget(api, allowed=2, app="web")
    api.evict(_eviction("x"))
    budget = api.get(PodDisruptionBudget, "budget", "default")
    assert budget.status is not None
    assert budget.status.disruptions_allowed == 1
    assert budget.status.disrupted_pods == {"x": rfc3339(clock.now())}
    assert budget.status.conditions is None
    assert api.get(Pod, "x", "default").metadata.deletion_timestamp is not None


def test_eviction_taking_the_last_disruption_sets_the_condition(
    api: ApiService, clock: ManualClock
) -> None:
    """``UpdateDisruptionAllowedCondition``: DisruptionAllowed=False, InsufficientPods."""
    _running(api, "x", app="web")
    _budget(api, allowed=1, app="web")
    api.evict(_eviction("x"))
    budget = api.get(PodDisruptionBudget, "budget", "default")
    assert budget.status is not None
    assert budget.status.conditions is not None
    [condition] = budget.status.conditions
    assert (condition.type, condition.status, condition.reason) == (
        "DisruptionAllowed",
        "False",
        "InsufficientPods",
    )
    assert condition.last_transition_time == rfc3339(clock.now())


def test_eviction_blocked_by_budget_is_429_with_cause(api: ApiService) -> None:
    _running(api, "x", app="web")
    _budget(api, allowed=0, desired=3, current=2, app="web")
    before = _snapshot(api)
    with pytest.raises(errors.TooManyRequestsError) as caught:
        api.evict(_eviction("x"))
    status = caught.value.status
    assert (status.code, status.reason) == (429, "TooManyRequests")
    assert status.message == "Cannot evict pod as it would violate the pod's disruption budget."
    assert status.details is not None
    assert [(c.reason, c.message) for c in status.details.causes or ()] == [
        (
            "DisruptionBudget",
            "The disruption budget budget needs 3 healthy pods and has 2 currently",
        )
    ]
    assert _snapshot(api) == before


def test_eviction_with_unobserved_budget_asks_to_retry(api: ApiService) -> None:
    _running(api, "x", app="web")
    budget = _budget(api, allowed=1, app="web")
    spec = budget.spec
    assert spec is not None
    api.update(
        dataclasses.replace(budget, spec=dataclasses.replace(spec, min_available=2))
    )  # generation 2, observed 1
    with pytest.raises(errors.TooManyRequestsError) as caught:
        api.evict(_eviction("x"))
    details = caught.value.status.details
    assert details is not None
    assert details.retry_after_seconds == 10
    assert [c.message for c in details.causes or ()] == [
        "The disruption budget budget is still being processed by the server."
    ]


def test_eviction_with_negative_budget_is_forbidden(api: ApiService) -> None:
    _running(api, "x", app="web")
    created = _budget(api, allowed=1, app="web")
    # A disruption controller bug could write this; validation forbids it, so bypass the API.
    from kubeprio.store.interface import ObjectKey

    broken = dataclasses.replace(
        created,
        status=dataclasses.replace(
            created.status or PodDisruptionBudgetStatus(), disruptions_allowed=-1
        ),
    )
    api.store.update(
        ObjectKey("poddisruptionbudgets", "default", "budget"), broken, expected_revision=None
    )
    with pytest.raises(errors.ForbiddenError) as caught:
        api.evict(_eviction("x"))
    assert (
        caught.value.message
        == 'poddisruptionbudget.policy "budget" is forbidden: pdb disruptions allowed is negative'
    )


def test_eviction_with_two_budgets_is_unsupported(api: ApiService) -> None:
    _running(api, "x", app="web")
    _budget(api, allowed=1, name="one", app="web")
    _budget(api, allowed=1, name="two", app="web")
    with pytest.raises(errors.StatusError) as caught:
        api.evict(_eviction("x"))
    assert caught.value.status.code == 500
    assert (
        caught.value.message
        == "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    )


@pytest.mark.parametrize("phase", ["Pending", "Succeeded", "Failed"])
def test_pending_and_terminal_pods_ignore_budgets(api: ApiService, phase: str) -> None:
    """``canIgnorePDB``: these pods are deleted without consulting the budget."""
    if phase == "Pending":
        api.create(pod("x").labels(app="web").build())
    else:
        running = _running(api, "x", app="web")
        api.update_status(
            dataclasses.replace(
                running, status=dataclasses.replace(running.status or PodStatus(), phase=phase)
            )
        )
    budget = _budget(api, allowed=0, app="web")
    api.evict(_eviction("x"))
    assert api.list(Pod, "default").items == []
    assert api.get(PodDisruptionBudget, "budget", "default") == budget


@pytest.mark.parametrize(
    ("policy", "current", "evicted"),
    [(None, 2, True), (None, 1, False), ("IfHealthyBudget", 2, True), ("AlwaysAllow", 0, True)],
    ids=["healthy budget", "unhealthy budget", "IfHealthyBudget healthy", "AlwaysAllow"],
)
def test_unready_pods_may_skip_the_budget(
    api: ApiService, policy: str | None, current: int, evicted: bool
) -> None:
    """An unready pod is not counted healthy: evicting it costs nothing when the budget is met."""
    _running(api, "x", ready=False, app="web")
    budget = _budget(api, allowed=0, desired=2, current=current, policy=policy, app="web")
    if evicted:
        api.evict(_eviction("x"))
        assert api.get(Pod, "x", "default").metadata.deletion_timestamp is not None
        assert api.get(PodDisruptionBudget, "budget", "default") == budget
    else:
        with pytest.raises(errors.TooManyRequestsError):
            api.evict(_eviction("x"))


def test_label_less_pod_matches_a_does_not_exist_budget(api: ApiService) -> None:
    """Eviction matches budgets with ``selector.Matches`` even for pods without labels."""
    from kubeprio.api.meta import LabelSelector, LabelSelectorRequirement

    _running(api, "x")
    api.create(
        PodDisruptionBudget(
            metadata=ObjectMeta(name="guard", namespace="default"),
            spec=PodDisruptionBudgetSpec(
                max_unavailable=0,
                selector=LabelSelector(
                    match_expressions=(
                        LabelSelectorRequirement(key="app", operator="DoesNotExist"),
                    )
                ),
            ),
        )
    )
    with pytest.raises(errors.TooManyRequestsError):
        api.evict(_eviction("x"))


# --- list --------------------------------------------------------------------------------------------


def test_list_with_label_selector(api: ApiService) -> None:
    api.create(pod("a").labels(app="web", tier="fe").build())
    api.create(pod("b").labels(app="db").build())
    api.create(pod("c").build())
    names = [
        p.metadata.name
        for p in api.list(Pod, "default", label_selector="app in (web,db),tier!=be").items
    ]
    assert names == ["a", "b"]


def test_list_with_kubectl_pod_field_selector(api: ApiService) -> None:
    """``kubectl describe node`` lists ``spec.nodeName=n,status.phase!=Succeeded,...``."""
    _running(api, "a", "n1")
    _running(api, "b", "n2")
    done = _running(api, "c", "n1")
    api.update_status(
        dataclasses.replace(
            done, status=dataclasses.replace(done.status or PodStatus(), phase="Succeeded")
        )
    )
    selected = api.list(
        Pod, field_selector="spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed"
    ).items
    assert [p.metadata.name for p in selected] == ["a"]


def test_list_events_with_kubectl_involved_object_selector(api: ApiService) -> None:
    """``kubectl describe pod`` lists events by ``involvedObject.namespace=..,involvedObject.uid=..``."""
    target = api.create(pod("a").build())
    other = api.create(pod("b").build())
    for name, ref in (("e1", target), ("e2", other)):
        api.create(
            Event(
                metadata=ObjectMeta(name=name, namespace="default"),
                involved_object=ObjectReference(
                    kind="Pod", namespace="default", name=ref.metadata.name, uid=ref.metadata.uid
                ),
                reason="Scheduled",
            )
        )
    selector = f"involvedObject.namespace=default,involvedObject.uid={target.metadata.uid}"
    assert [e.metadata.name for e in api.list(Event, "default", field_selector=selector).items] == [
        "e1"
    ]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"field_selector": "spec.priority=5"}, "field label not supported: spec.priority"),
        ({"label_selector": "app in (web"}, None),
    ],
    ids=["unsupported field", "bad label selector"],
)
def test_bad_selectors_are_400(
    api: ApiService, kwargs: dict[str, str], message: str | None
) -> None:
    with pytest.raises(errors.BadRequestError) as caught:
        api.list(Pod, **kwargs)  # type: ignore[arg-type]
    if message is not None:
        assert caught.value.message == message


def test_list_pages_with_limit_and_continue(api: ApiService) -> None:
    for name in ("a", "b", "c", "d", "e"):
        api.create(pod(name).build())
    first = api.list(Pod, "default", limit=2)
    assert [p.metadata.name for p in first.items] == ["a", "b"]
    assert first.remaining_item_count == 3
    assert first.continue_token is not None
    second = api.list(Pod, "default", limit=2, continue_token=first.continue_token)
    assert [p.metadata.name for p in second.items] == ["c", "d"]
    assert second.resource_version == first.resource_version
    third = api.list(Pod, "default", limit=2, continue_token=second.continue_token)
    assert [p.metadata.name for p in third.items] == ["e"]
    assert third.continue_token is None


def test_bad_continue_token_is_400(api: ApiService) -> None:
    with pytest.raises(errors.BadRequestError) as caught:
        api.list(Pod, continue_token="not-a-token")
    assert (
        caught.value.message == "continue key is not valid: incorrect encoded start resourceVersion"
    )


# --- watch ------------------------------------------------------------------------------------------


def test_watch_from_a_revision_replays_later_changes_only(api: ApiService) -> None:
    api.create(pod("a").build())
    since = api.store.current_revision()
    api.create(pod("b").build())
    api.delete(Pod, "a", "default")
    events = api.watch(Pod, "default", resource_version=str(since)).poll()
    # A pod delete is graceful with period 0 here: the deletionTimestamp is written
    # (MODIFIED) before the object goes (DELETED), as upstream's store does.
    assert [(e.type, e.object.metadata.name) for e in events] == [
        (WatchEventType.ADDED, "b"),
        (WatchEventType.MODIFIED, "a"),
        (WatchEventType.DELETED, "a"),
    ]


def test_watch_without_revision_starts_with_current_objects(api: ApiService) -> None:
    api.create(pod("a").build())
    events = api.watch(Pod, "default").poll()
    assert [(e.type, e.object.metadata.name) for e in events] == [(WatchEventType.ADDED, "a")]


def test_watch_with_selector_reports_objects_entering_and_leaving(api: ApiService) -> None:
    """The watch cache compares the object before and after: ADDED/MODIFIED/DELETED by visibility."""
    existing = api.create(pod("old").labels(app="web").build())
    created = api.create(pod("new").build())
    watch = api.watch(
        Pod, "default", resource_version=str(api.store.current_revision()), label_selector="app=web"
    )
    entered = api.update(
        dataclasses.replace(
            created, metadata=dataclasses.replace(created.metadata, labels={"app": "web"})
        )
    )
    api.update(
        dataclasses.replace(
            entered, metadata=dataclasses.replace(entered.metadata, labels={"app": "web", "v": "2"})
        )
    )
    api.update(
        dataclasses.replace(
            existing, metadata=dataclasses.replace(existing.metadata, labels={"app": "db"})
        )
    )
    api.delete(Pod, "new", "default")
    api.create(pod("other").build())
    assert [(e.type, e.object.metadata.name) for e in watch.poll()] == [
        (WatchEventType.ADDED, "new"),
        (WatchEventType.MODIFIED, "new"),
        (WatchEventType.DELETED, "old"),
        (WatchEventType.MODIFIED, "new"),
        (WatchEventType.DELETED, "new"),
    ]


def test_watch_with_selector_sees_deletion_of_objects_that_existed_before(api: ApiService) -> None:
    """Regression: a filtered watch opened at a revision lost deletes of older objects."""
    api.create(pod("old").labels(app="web").build())
    watch = api.watch(
        Pod, "default", resource_version=str(api.store.current_revision()), label_selector="app=web"
    )
    api.delete(Pod, "old", "default")
    assert [(e.type, e.object.metadata.name) for e in watch.poll()] == [
        (WatchEventType.MODIFIED, "old"),
        (WatchEventType.DELETED, "old"),
    ]


def test_watch_from_a_compacted_revision_is_410_gone(api: ApiService) -> None:
    api.create(pod("a").build())
    since = api.store.current_revision()
    api.create(pod("b").build())
    api.store.compact(api.store.current_revision())
    with pytest.raises(errors.GoneError) as caught:
        api.watch(Pod, "default", resource_version=str(since))
    assert (caught.value.status.code, caught.value.status.reason) == (410, "Expired")
    assert re.fullmatch(rf"too old resource version: {since} \(\d+\)", caught.value.message)


def test_watch_with_bad_resource_version_is_400(api: ApiService) -> None:
    with pytest.raises(errors.BadRequestError):
        api.watch(Pod, resource_version="latest")
