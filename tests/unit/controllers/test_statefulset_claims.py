"""A StatefulSet's claims: created before its pods, owned per the retention policy.

Upstream rules checked (``pkg/controller/statefulset``, v1.32):

* ``stateful_pod_control_test.go`` ``TestStatefulPodControlCreatesPodsWithClaims`` /
  ``...CreatePodPVCDeleting`` / ``...CreatePodFailed``: each missing claim
  ``<template>-<set>-<ordinal>`` is created before the pod with the template's spec and
  storage class, the template's labels plus the selector's, with the events "create Claim
  ... Pod ... in StatefulSet ... success"; a claim being deleted, or one the API refuses,
  blocks the pod ("create Pod web-0 in StatefulSet web failed error: ...");
* ``stateful_set_utils_test.go`` ``TestIsClaimOwnerUpToDate`` /
  ``TestUpdateClaimOwnerRefForSetAndPod``: the owner references each
  ``persistentVolumeClaimRetentionPolicy`` wants for a live and a condemned pod, stale
  references left alone, a foreign controller's claim losing ours;
* ``stateful_set_control_test.go`` (``fixPodClaim``): scaling down gives the condemned
  pod's claim a reference to the pod under ``whenScaled: Delete``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubeprio.api.core import Pod
from kubeprio.api.meta import ObjectMeta, OwnerReference
from kubeprio.api.model import evolve
from kubeprio.api.persistentvolume import PersistentVolumeClaim
from kubeprio.api.serialization import from_dict
from kubeprio.api.statefulset import StatefulSet, StatefulSetPersistentVolumeClaimRetentionPolicy
from kubeprio.controllers import statefulsetclaims as claims
from tests.unit.controllers.conftest import World
from tests.unit.controllers.test_statefulset import Cluster, events, stateful_set

TEMPLATE = {
    "metadata": {"name": "www", "labels": {"tier": "data"}},
    "spec": {
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "gold",
        "resources": {"requests": {"storage": "1Gi"}},
    },
}


def with_claims(
    sts: StatefulSet, *templates: dict[str, Any], deleted: str = "", scaled: str = ""
) -> StatefulSet:
    assert sts.spec is not None
    policy = (
        StatefulSetPersistentVolumeClaimRetentionPolicy(when_deleted=deleted, when_scaled=scaled)
        if deleted or scaled
        else None
    )
    spec = dataclasses.replace(
        sts.spec,
        extra={"volumeClaimTemplates": list(templates or [TEMPLATE])},
        persistent_volume_claim_retention_policy=policy,
    )
    return dataclasses.replace(sts, spec=spec)


def claim(cluster: Cluster, name: str) -> PersistentVolumeClaim:
    return cluster.api.get(PersistentVolumeClaim, name, "default")


def owners(cluster: Cluster, name: str) -> list[tuple[str, str, bool]]:
    return [
        (ref.kind or "", ref.name or "", bool(ref.controller))
        for ref in claim(cluster, name).metadata.owner_references or ()
    ]


@pytest.fixture
def cluster(world: World) -> Cluster:
    return Cluster(world)


def test_claims_are_created_before_their_pods(cluster: Cluster) -> None:
    cluster.create(with_claims(stateful_set(replicas=2)))
    created = claim(cluster, "www-web-0")
    assert created.metadata.labels == {"tier": "data", "app": "web"}
    assert created.spec is not None
    assert created.spec.storage_class_name == "gold"
    assert str((created.spec.resources.requests or {})["storage"]) == "1Gi"  # type: ignore[union-attr]
    assert (created.status.phase if created.status else None) == "Pending"
    # OrderedReady: web-1 (and its claim) wait for web-0 to be ready.
    assert cluster.names() == ["web-0"]
    cluster.run_until_stable()
    assert claim(cluster, "www-web-1").metadata.name == "www-web-1"
    assert events(cluster, "SuccessfulCreate") == [
        "create Claim www-web-0 Pod web-0 in StatefulSet web success",
        "create Pod web-0 in StatefulSet web successful",
        "create Claim www-web-1 Pod web-1 in StatefulSet web success",
        "create Pod web-1 in StatefulSet web successful",
    ]


def test_template_without_labels_gets_the_selectors(cluster: Cluster) -> None:
    template = {**TEMPLATE, "metadata": {"name": "data"}}
    cluster.create(with_claims(stateful_set(replicas=1), template))
    assert claim(cluster, "data-web-0").metadata.labels == {"app": "web"}


def test_a_claim_being_deleted_blocks_the_pod(cluster: Cluster) -> None:
    # The claim exists with the pvc-protection finalizer and is being deleted.
    existing = from_dict(
        PersistentVolumeClaim,
        {
            **TEMPLATE,
            "metadata": {
                "name": "www-web-0",
                "namespace": "default",
                "finalizers": ["kubernetes.io/pvc-protection"],
            },
        },
    )
    cluster.api.create(existing)
    cluster.api.delete(PersistentVolumeClaim, "www-web-0", "default")
    cluster.create(with_claims(stateful_set(replicas=1)))
    assert cluster.names() == []
    assert events(cluster, "FailedCreate")[0] == (
        "create Pod web-0 in StatefulSet web failed error: pvc www-web-0 is being deleted"
    )
    # Once the claim is gone the pod and a new claim are made.
    terminating = claim(cluster, "www-web-0")
    cluster.api.update(evolve(terminating, metadata=evolve(terminating.metadata, finalizers=None)))
    cluster.world.clock.advance(60)
    cluster.world.settle()
    assert cluster.names() == ["web-0"]
    assert not claim(cluster, "www-web-0").metadata.deletion_timestamp


def test_a_refused_claim_blocks_the_pod_with_both_events(cluster: Cluster) -> None:
    # The API refuses the claim (a template without a storage request is invalid).
    template = {"metadata": {"name": "www"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    cluster.create(with_claims(stateful_set(replicas=1), template))
    assert cluster.names() == []
    refusal = (
        'PersistentVolumeClaim "www-web-0" is invalid: spec.resources[storage]: Required value'
    )
    assert events(cluster, "FailedCreate")[:2] == [
        f"create Claim www-web-0 for Pod web-0 in StatefulSet web failed error: {refusal}",
        "create Pod web-0 in StatefulSet web failed error: failed to create PVC www-web-0: "
        f"{refusal}",
    ]


SET = ("StatefulSet", "web", True)


@pytest.mark.parametrize(
    ("deleted", "scaled", "live", "condemned"),
    [
        ("Retain", "Retain", [], []),
        ("Delete", "Retain", [SET], [SET]),
        ("Retain", "Delete", [], [("Pod", "web-1", True)]),
        ("Delete", "Delete", [SET], [("Pod", "web-1", True)]),
    ],
    ids=["retain-retain", "delete-on-set-deletion", "delete-on-scaledown", "delete-both"],
)
def test_retention_policy_owner_references(
    cluster: Cluster, deleted: str, scaled: str, live: list[Any], condemned: list[Any]
) -> None:
    cluster.create(with_claims(stateful_set(replicas=2), deleted=deleted, scaled=scaled))
    cluster.run_until_stable()
    assert owners(cluster, "www-web-0") == live
    assert owners(cluster, "www-web-1") == live
    cluster.update(replicas=1)
    # fixPodClaim runs before the condemned pod is deleted.
    assert owners(cluster, "www-web-1") == condemned
    assert owners(cluster, "www-web-0") == live


# --- the pure rules (stateful_set_utils_test.go) -------------------------------------------


def _set(deleted: str, scaled: str, replicas: int = 2) -> StatefulSet:
    sts = with_claims(stateful_set(replicas=replicas), deleted=deleted, scaled=scaled)
    return evolve(sts, metadata=evolve(sts.metadata, uid="set-uid"))


def _pod(ordinal: int, uid: str = "pod-uid") -> Pod:
    return Pod(metadata=ObjectMeta(name=f"web-{ordinal}", namespace="default", uid=uid))


def _claim(*refs: OwnerReference) -> PersistentVolumeClaim:
    return PersistentVolumeClaim(
        metadata=ObjectMeta(name="www-web-1", namespace="default", owner_references=refs or None)
    )


SET_REF = OwnerReference(
    api_version="apps/v1", kind="StatefulSet", name="web", uid="set-uid", controller=True
)
POD_REF = OwnerReference(api_version="v1", kind="Pod", name="web-1", uid="pod-uid", controller=True)
STALE_POD_REF = dataclasses.replace(POD_REF, uid="old-uid")
OTHER = OwnerReference(api_version="v1", kind="Other", name="x", uid="x-uid", controller=True)
PLAIN_SET_REF = dataclasses.replace(SET_REF, controller=None)


@pytest.mark.parametrize(
    ("policy", "replicas", "refs", "up_to_date", "after"),
    [
        (("Retain", "Retain"), 2, (), True, ()),
        (("Retain", "Retain"), 2, (SET_REF,), False, ()),
        (("Delete", "Retain"), 2, (), False, ("set",)),
        (("Delete", "Retain"), 2, (SET_REF,), True, ("set",)),
        (("Retain", "Delete"), 2, (), True, ()),
        (("Retain", "Delete"), 1, (), False, ("pod",)),
        (("Delete", "Delete"), 2, (SET_REF,), True, ("set",)),
        (("Delete", "Delete"), 1, (SET_REF,), False, ("pod",)),
        (("Delete", "Delete"), 1, (POD_REF,), True, ("pod",)),
        # A non-controller reference of ours is made a controller one.
        (("Delete", "Retain"), 2, (PLAIN_SET_REF,), False, ("set",)),
        # A stale pod reference (an earlier web-1): left alone.
        (("Retain", "Delete"), 1, (STALE_POD_REF,), True, ("stale",)),
        # Another controller: our references go, none come back.
        (("Delete", "Delete"), 2, (OTHER, SET_REF), False, ("other",)),
        (("Delete", "Delete"), 2, (OTHER,), True, ("other",)),
    ],
    ids=[
        "retain-none",
        "retain-set-ref-removed",
        "set-deletion-needs-set-ref",
        "set-deletion-has-set-ref",
        "scaledown-live-pod",
        "scaledown-condemned-pod",
        "both-live",
        "both-condemned-moves-to-pod",
        "both-condemned-has-pod",
        "non-controller-ref",
        "stale-pod-ref",
        "unexpected-controller-with-ours",
        "unexpected-controller-alone",
    ],
)
def test_claim_owner_rules(policy, replicas, refs, up_to_date, after):
    sts, pod = _set(*policy, replicas=replicas), _pod(1)
    pvc = _claim(*refs)
    assert claims.is_claim_owner_up_to_date(pvc, sts, pod) is up_to_date
    named = {"set": SET_REF, "pod": POD_REF, "stale": STALE_POD_REF, "other": OTHER}
    fixed = pvc if up_to_date else claims.with_policy_owner_refs(pvc, sts, pod)
    got = [
        (r.kind, r.name, r.uid, bool(r.controller)) for r in fixed.metadata.owner_references or ()
    ]
    want = [(named[n].kind, named[n].name, named[n].uid, True) for n in after]
    assert got == want
    assert claims.is_claim_owner_up_to_date(fixed, sts, pod)


def test_claims_for_names_and_labels():
    sts = with_claims(stateful_set(), TEMPLATE, {**TEMPLATE, "metadata": {"name": "logs"}})
    made = claims.claims_for(sts, _pod(2))
    assert [c.metadata.name for c in made] == ["www-web-2", "logs-web-2"]
    assert [c.metadata.labels for c in made] == [{"tier": "data", "app": "web"}, {"app": "web"}]
    assert {c.metadata.namespace for c in made} == {"default"}


def test_pod_claim_is_stale_only_under_scaled_delete():
    # PodClaimIsStale: the new pod has no UID yet; a claim naming the old web-1 is stale.
    pvc = _claim(POD_REF)
    new_pod = _pod(1, uid="")
    assert claims.pod_ref_is_stale(pvc, new_pod)
    assert claims.retention_policy(_set("Retain", "Retain")) == ("Retain", "Retain")
