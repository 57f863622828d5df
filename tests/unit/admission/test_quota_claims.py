"""ResourceQuota for PersistentVolumeClaims: the claim evaluator, admission and the controller.

Upstream rules checked (``pkg/quota/v1/evaluator/core/persistent_volume_claims.go`` and its
``persistent_volume_claims_test.go``; ``plugin/resourcequota/controller.go``):

* a claim charges ``persistentvolumeclaims`` and ``count/persistentvolumeclaims`` 1 and
  ``requests.storage`` its request, rounded up to a whole byte, or its allocated storage
  when that is larger (``RecoverVolumeExpansionFailure``, on in v1.32); a claim of a class
  charges both again as ``<class>.storageclass.storage.k8s.io/<resource>``
  (``TestPersistentVolumeClaimEvaluatorUsage``);
* the evaluator matches those names, and any class's (``MatchingResources``);
* admission refuses a claim over quota with the generic ``exceeded quota`` text, charges
  an update its growth (``Handles`` creates and updates), and the controller counts the
  namespace's claims per class and gives a deleted claim back.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeprio.admission.defaults import default_chain
from kubeprio.api import errors, kinds, quotausage
from kubeprio.api.core import Namespace, Pod
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.persistentvolume import PersistentVolumeClaim
from kubeprio.api.quantity import parse_quantity
from kubeprio.api.resourcequota import ResourceQuota, ResourceQuotaSpec, ResourceQuotaStatus
from kubeprio.api.serialization import from_dict
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.controllers.resourcequota import ResourceQuotaController
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.driving import Driver

NS = "team-a"
CLAIMS = kinds.for_model(PersistentVolumeClaim)
GOLD = "gold.storageclass.storage.k8s.io/"


def claim(
    name: str = "data",
    storage: str | None = "1Gi",
    storage_class: str | None = None,
    allocated: str | None = None,
    annotations: dict[str, str] | None = None,
) -> PersistentVolumeClaim:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {}}
    if storage is not None:
        spec["resources"] = {"requests": {"storage": storage}}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    metadata: dict[str, Any] = {"name": name, "namespace": NS}
    if annotations:
        metadata["annotations"] = annotations
    body: dict[str, Any] = {"metadata": metadata, "spec": spec}
    if allocated is not None:
        body["status"] = {"allocatedResources": {"storage": allocated}}
    return from_dict(PersistentVolumeClaim, body)


def text(usage: dict[str, Any]) -> dict[str, str]:
    return {name: str(amount) for name, amount in usage.items()}


BASE = {"count/persistentvolumeclaims": "1", "persistentvolumeclaims": "1"}


@pytest.mark.parametrize(
    ("pvc", "expected"),
    [
        (claim(storage="10Gi"), {**BASE, "requests.storage": "10Gi"}),
        (
            claim(storage="10Gi", storage_class="gold"),
            {
                **BASE,
                "requests.storage": "10Gi",
                GOLD + "persistentvolumeclaims": "1",
                GOLD + "requests.storage": "10Gi",
            },
        ),
        # The beta annotation names the class before storageClassName does.
        (
            claim(
                storage="1Gi",
                storage_class="silver",
                annotations={"volume.beta.kubernetes.io/storage-class": "gold"},
            ),
            {
                **BASE,
                "requests.storage": "1Gi",
                GOLD + "persistentvolumeclaims": "1",
                GOLD + "requests.storage": "1Gi",
            },
        ),
        # A fraction of a byte counts as a whole one (issue 94313).
        (claim(storage="1500m"), {**BASE, "requests.storage": "2"}),
        (claim(storage="10Gi", allocated="20Gi"), {**BASE, "requests.storage": "20Gi"}),
        (claim(storage="10Gi", allocated="5Gi"), {**BASE, "requests.storage": "10Gi"}),
        # No request: no storage is charged (the allocation alone does not count).
        (claim(storage=None, allocated="5Gi"), BASE),
    ],
    ids=[
        "pvc-usage",
        "pvc-usage-by-class",
        "pvc-usage-beta-annotation",
        "pvc-usage-rounded",
        "pvc-usage-higher-allocated-resources",
        "pvc-usage-lower-allocated-resources",
        "pvc-usage-no-request",
    ],
)
def test_claim_usage(pvc, expected):
    assert text(quotausage.object_usage(CLAIMS, pvc)) == expected


@pytest.mark.parametrize(
    ("name", "covered"),
    [
        ("count/persistentvolumeclaims", True),
        ("persistentvolumeclaims", True),
        ("requests.storage", True),
        (GOLD + "requests.storage", True),
        (GOLD + "persistentvolumeclaims", True),
        ("requests.cpu", False),
        ("storage", False),
        (GOLD + "requests.cpu", False),
    ],
)
def test_matching_resources(name, covered):
    assert quotausage.covers(CLAIMS, name) is covered


# --- admission and the controller, in-process ----------------------------------------------


class World:
    def __init__(self) -> None:
        self.clock = ManualClock()
        api = ApiService(MemoryStore(), clock=self.clock, rng=random.Random(0))
        api.admission = default_chain(api.listers)
        api.create_object(Namespace(metadata=ObjectMeta(name=NS)))
        self.api = api
        pods: Informer[Pod] = Informer(api, Pod)
        quotas: Informer[ResourceQuota] = Informer(api, ResourceQuota)
        claims: Informer[PersistentVolumeClaim] = Informer(api, PersistentVolumeClaim)
        self.controller = ResourceQuotaController(
            api, clock=self.clock, rng=random.Random(0), pods=pods, quotas=quotas,
            counted=[claims],
        )  # fmt: skip
        self.driver = Driver(self.clock, [pods, quotas, claims], [self.controller])

    def quota(self, name: str, hard: dict[str, str]) -> None:
        self.api.create_object(
            ResourceQuota(
                metadata=ObjectMeta(name=name, namespace=NS),
                spec=ResourceQuotaSpec(hard={k: parse_quantity(v) for k, v in hard.items()}),
            )
        )
        self.driver.settle()

    def used(self, name: str) -> dict[str, str]:
        stored = self.api.get(ResourceQuota, name, NS)
        return text(dict((stored.status or ResourceQuotaStatus()).used or {}))

    def refused(self, obj: Any) -> str:
        with pytest.raises(errors.ForbiddenError) as raised:
            self.api.create_object(obj)
        return raised.value.message


@pytest.fixture
def world() -> World:
    return World()


def test_claims_are_counted_per_class_and_refused_over_quota(world):
    world.api.create_object(claim("before", "2Gi", "gold"))
    world.api.create_object(claim("plain", "1Gi"))
    world.quota(
        "q",
        {
            "persistentvolumeclaims": "5",
            "requests.storage": "10Gi",
            GOLD + "requests.storage": "4Gi",
            GOLD + "persistentvolumeclaims": "2",
        },
    )
    assert world.used("q") == {
        "persistentvolumeclaims": "2",
        "requests.storage": "3Gi",
        GOLD + "requests.storage": "2Gi",
        GOLD + "persistentvolumeclaims": "1",
    }
    assert world.refused(claim("big", "3Gi", "gold")) == (
        'persistentvolumeclaims "big" is forbidden: exceeded quota: q, requested: '
        f"{GOLD}requests.storage=3Gi, used: {GOLD}requests.storage=2Gi, "
        f"limited: {GOLD}requests.storage=4Gi"
    )
    # Another class is not limited per class; only the totals apply.
    world.api.create_object(claim("silver", "6Gi", "silver"))
    assert world.refused(claim("more", "2Gi")) == (
        'persistentvolumeclaims "more" is forbidden: exceeded quota: q, requested: '
        "requests.storage=2Gi, used: requests.storage=9Gi, limited: requests.storage=10Gi"
    )
    # A deleted claim waits for its pvc-protection finalizer and is charged until gone.
    world.api.delete(PersistentVolumeClaim, "silver", NS)
    world.driver.settle()
    assert world.used("q")["requests.storage"] == "9Gi"
    terminating = world.api.get(PersistentVolumeClaim, "silver", NS)
    world.api.update(evolve(terminating, metadata=evolve(terminating.metadata, finalizers=None)))
    world.driver.settle()
    assert world.used("q")["requests.storage"] == "3Gi"
    world.api.create_object(claim("more", "2Gi"))


def test_a_claim_update_is_charged_its_growth(world):
    # The claim evaluator handles updates: a class set later (allowed while unset,
    # RetroactiveDefaultStorageClass) costs the class's share; the totals do not grow.
    world.quota("q", {"requests.storage": "5Gi", GOLD + "requests.storage": "3Gi"})
    world.api.create_object(claim("other", "2Gi", "gold"))
    created = world.api.create_object(claim("data", "2Gi")).obj
    assert world.used("q") == {"requests.storage": "4Gi", GOLD + "requests.storage": "2Gi"}
    with pytest.raises(errors.ForbiddenError) as raised:
        world.api.update(evolve(created, spec=evolve(created.spec, storage_class_name="gold")))
    assert raised.value.message == (
        'persistentvolumeclaims "data" is forbidden: exceeded quota: q, requested: '
        f"{GOLD}requests.storage=2Gi, used: {GOLD}requests.storage=2Gi, "
        f"limited: {GOLD}requests.storage=3Gi"
    )


def test_claim_count_quota(world):
    world.quota("q", {"count/persistentvolumeclaims": "1"})
    world.api.create_object(claim("a"))
    assert world.refused(claim("b")) == (
        'persistentvolumeclaims "b" is forbidden: exceeded quota: q, requested: '
        "count/persistentvolumeclaims=1, used: count/persistentvolumeclaims=1, "
        "limited: count/persistentvolumeclaims=1"
    )
