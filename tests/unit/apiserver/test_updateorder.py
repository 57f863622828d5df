"""The order of an update's steps: the mutating phase sees the body as sent, the strategy
runs on what it returned.

Upstream v1.32: ``endpoints/handlers/update.go`` (and ``patch.go``, whose patched object
takes the same road) passes the mutating admission to the registry as a transformer of
``rest.DefaultUpdatedObjectInfo``; the generic store's ``Update``
(``registry/generic/registry/store.go``) calls ``objInfo.UpdatedObject`` (so: the
mutating phase), then compares the resourceVersion *of the mutated object*, then
``rest.BeforeUpdate`` (generation reset to the stored one, the strategy's
``PrepareForUpdate``: a main write keeps the stored status, a ``/status`` write the stored
spec, ``deploymentStrategy`` bumps the generation when the spec changed; then
``ValidateUpdate``), then the validating admission. RBAC's policy-based storage
(``pkg/registry/rbac/*/policybased/storage.go``) checks escalation in a
``rest.WrapUpdatedObjectInfo`` around the handler's, so after the mutating phase and
before the resourceVersion check; on create, inside ``Create`` after the handler's
mutating phase and before ``BeforeCreate`` (which generates the name).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubeprio.admission.chain import UserInfo
from kubeprio.api import errors, manifest
from kubeprio.api.apps import Deployment, DeploymentStatus
from kubeprio.api.model import evolve
from kubeprio.api.patch import PatchType
from kubeprio.api.webhookconfiguration import (
    MutatingWebhookConfiguration,
    ValidatingWebhookConfiguration,
)
from kubeprio.apiserver.service import ApiService
from tests.manifests import deployment_doc
from tests.unit.admission.test_webhookdispatch import (
    Handler,
    InProcessCaller,
    allow,
    api,
    caller,
    hook,
    patching,
    register,
)

__all__ = ["api", "caller"]  # the fixtures this module uses

DEPLOYMENT_RULE = {
    "operations": ["CREATE", "UPDATE"],
    "apiGroups": ["apps"],
    "apiVersions": ["v1"],
    "resources": ["deployments", "deployments/status"],
}


def _webhooks(api: ApiService, caller: InProcessCaller, mutate: Handler) -> Deployment:
    """A stored Deployment, then a mutating and a validating webhook on Deployments."""
    stored = api.create_object(manifest.decode_object(deployment_doc("web"))).obj
    assert isinstance(stored, Deployment)
    caller.handlers["/mutate"] = mutate
    caller.handlers["/validate"] = allow()
    register(
        api, MutatingWebhookConfiguration, "m", hook("m.x.y", "/mutate", rules=[DEPLOYMENT_RULE])
    )
    register(
        api,
        ValidatingWebhookConfiguration,
        "v",
        hook("v.x.y", "/validate", rules=[DEPLOYMENT_RULE]),
    )
    return stored


def _reviews(caller: InProcessCaller) -> tuple[dict[str, Any], dict[str, Any]]:
    """The mutating and the validating webhook's requests of the one write made."""
    mutated, validated = (review["request"] for _, review in caller.calls)
    return mutated, validated


def _replicas(obj: Deployment) -> int | None:
    assert obj.spec is not None
    return obj.spec.replicas


def _with_replicas(obj: Deployment, replicas: int) -> Deployment:
    assert obj.spec is not None
    return evolve(obj, spec=evolve(obj.spec, replicas=replicas))


def test_a_main_write_shows_its_status_to_the_mutating_phase_which_cannot_change_it(
    api: ApiService, caller: InProcessCaller
) -> None:
    """deploymentStrategy.PrepareForUpdate runs after UpdatedObject: the webhook sees
    the status the writer sent; the status it adds is dropped, its label kept."""
    stored = _webhooks(
        api,
        caller,
        patching(
            {"op": "add", "path": "/status/availableReplicas", "value": 9},
            {"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}},
        ),
    )
    sent = evolve(stored, status=DeploymentStatus(replicas=3))

    written = api.update_object(sent).obj

    mutated, validated = _reviews(caller)
    assert mutated["object"]["status"] == {"replicas": 3}
    assert validated["object"].get("status") == validated["oldObject"].get("status")
    assert validated["object"]["metadata"]["labels"] == {"mutated": "yes"}
    assert written.status == stored.status
    assert written.metadata.labels == {"mutated": "yes"}
    assert api.get(Deployment, "web", "default") == written


def test_a_status_write_shows_its_spec_to_the_mutating_phase_which_cannot_change_it(
    api: ApiService, caller: InProcessCaller
) -> None:
    """deploymentStatusStrategy.PrepareForUpdate: the stored spec comes back after the
    mutating phase; the status the webhook set is stored."""
    stored = _webhooks(
        api,
        caller,
        patching(
            {"op": "replace", "path": "/spec/replicas", "value": 7},
            {"op": "add", "path": "/status/availableReplicas", "value": 1},
        ),
    )
    status = DeploymentStatus(replicas=2, ready_replicas=2)
    sent = evolve(_with_replicas(stored, 5), status=status)

    written = api.update_object(sent, subresource="status").obj

    mutated, validated = _reviews(caller)
    assert mutated["subResource"] == "status"
    assert mutated["object"]["spec"]["replicas"] == 5
    assert validated["object"]["spec"] == validated["oldObject"]["spec"]
    assert _replicas(written) == _replicas(stored)
    assert written.status == evolve(status, available_replicas=1)
    assert written.metadata.generation == stored.metadata.generation


def test_the_mutating_phase_sees_the_generation_sent_and_validation_the_bumped_one(
    api: ApiService, caller: InProcessCaller
) -> None:
    """BeforeUpdate resets the generation to the stored one and the strategy bumps it,
    both after the mutating phase: a writer's generation is what the webhook sees."""
    stored = _webhooks(api, caller, allow())
    assert stored.metadata.generation == 1
    sent = _with_replicas(stored, 4)
    sent = evolve(sent, metadata=evolve(sent.metadata, generation=40))

    written = api.update_object(sent).obj

    mutated, validated = _reviews(caller)
    generations = [
        (review["object"]["metadata"]["generation"], review["oldObject"]["metadata"]["generation"])
        for review in (mutated, validated)
    ]
    assert generations == [(40, 1), (2, 1)]
    assert written.metadata.generation == 2


def test_a_spec_change_made_by_the_mutating_phase_bumps_the_generation(
    api: ApiService, caller: InProcessCaller
) -> None:
    """The strategy compares the mutated spec with the stored one."""
    stored = _webhooks(
        api, caller, patching({"op": "replace", "path": "/spec/replicas", "value": 6})
    )
    labelled = evolve(stored, metadata=evolve(stored.metadata, labels={"tier": "a"}))

    written = api.update_object(labelled).obj

    assert (_replicas(written), written.metadata.generation) == (6, 2)


def test_a_patch_takes_the_same_order(api: ApiService, caller: InProcessCaller) -> None:
    """patch.go: the patched object is the store's UpdatedObject, mutated then prepared."""
    stored = _webhooks(api, caller, patching({"op": "add", "path": "/status/replicas", "value": 8}))

    written = api.patch_object(
        Deployment,
        "web",
        {"metadata": {"labels": {"tier": "b"}}, "status": {"observedGeneration": 5}},
        namespace="default",
        patch_type=PatchType.MERGE_PATCH,
    ).obj

    mutated, _ = _reviews(caller)
    assert mutated["object"]["status"] == {"observedGeneration": 5}
    assert written.status == stored.status
    assert written.metadata.labels == {"tier": "b"}


def _fresh_version(request: dict[str, Any]) -> dict[str, Any]:
    """A webhook that writes the stored resourceVersion into the object."""
    version = request["oldObject"]["metadata"]["resourceVersion"]
    return patching({"op": "replace", "path": "/metadata/resourceVersion", "value": version})(
        request
    )


def test_the_resource_version_compared_is_the_mutated_objects(
    api: ApiService, caller: InProcessCaller
) -> None:
    """The store reads the resourceVersion of UpdatedObject's result: a webhook that
    brings a stale write up to date makes it pass."""
    stored = _webhooks(api, caller, _fresh_version)
    api.update_object(evolve(stored, metadata=evolve(stored.metadata, labels={"tier": "a"})))
    stale = evolve(stored, metadata=evolve(stored.metadata, labels={"tier": "b"}))

    written = api.update_object(stale).obj

    assert written.metadata.labels == {"tier": "b"}


@dataclasses.dataclass
class RecordingGuard:
    """A write guard that records what it saw and refuses when told to."""

    seen: list[tuple[Any, Any]] = dataclasses.field(default_factory=list)
    refusal: errors.StatusError | None = None

    def check(self, obj: Any, old: Any, user: UserInfo | None) -> None:
        self.seen.append((obj, old))
        if self.refusal is not None:
            raise self.refusal


BOB = UserInfo("bob", ("system:authenticated",))


def test_the_write_guard_sees_the_mutated_object_before_the_strategy(
    api: ApiService, caller: InProcessCaller
) -> None:
    stored = _webhooks(
        api, caller, patching({"op": "add", "path": "/metadata/labels", "value": {"m": "1"}})
    )
    guard = RecordingGuard()
    api.write_guard = guard
    sent = evolve(_with_replicas(stored, 3), status=DeploymentStatus(replicas=3))

    api.update_object(sent, user=BOB)

    [(seen, old)] = guard.seen
    assert seen.metadata.labels == {"m": "1"}
    assert (seen.status, seen.metadata.generation) == (DeploymentStatus(replicas=3), 1)
    assert old == stored


def test_the_write_guard_refuses_before_the_resource_version_is_compared(
    api: ApiService, caller: InProcessCaller
) -> None:
    stored = _webhooks(api, caller, allow())
    api.update_object(evolve(stored, metadata=evolve(stored.metadata, labels={"tier": "a"})))
    refusal = errors.forbidden_error("deployments", "apps", "web", "no")
    api.write_guard = RecordingGuard(refusal=refusal)
    caller.calls.clear()

    with pytest.raises(errors.ForbiddenError):
        api.update_object(stored, user=BOB)  # stale as well

    assert caller.paths() == ["/mutate"]


def test_on_create_the_write_guard_sees_the_mutated_object_before_its_name_is_generated(
    api: ApiService, caller: InProcessCaller
) -> None:
    _webhooks(api, caller, patching({"op": "add", "path": "/metadata/labels", "value": {"m": "1"}}))
    guard = RecordingGuard()
    api.write_guard = guard
    doc = deployment_doc("")
    doc["metadata"] = {"generateName": "web-", "namespace": "default"}

    created = api.create_object(manifest.decode_object(doc), user=BOB).obj

    [(seen, old)] = guard.seen
    assert (seen.metadata.labels, seen.metadata.name, old) == ({"m": "1"}, None, None)
    assert created.metadata.name.startswith("web-")
