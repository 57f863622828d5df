"""``propagationPolicy`` on delete: the finalizers the garbage collector acts on.

Upstream: the generic registry store's ``Delete`` and
``updateForGracefulDeletionAndFinalizers`` (``deletionFinalizersForGarbageCollection`` in
``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``): an object deleted
with ``Orphan`` or ``Foreground`` gets the ``orphan`` or ``foregroundDeletion`` finalizer
and a deletionTimestamp (grace 0) and stays; the Job REST's ``Delete``
(``pkg/registry/batch/job/storage/storage.go``) warns when a batch/v1 Job is deleted
without a policy, which orphans its pods.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import errors
from kubeprio.api.apps import Deployment
from kubeprio.api.batch import Job
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.meta import ObjectMeta
from kubeprio.apiserver.service import ApiService
from kubeprio.client.protocol import DeleteRequest
from tests.manifests import create, deployment_doc

JOB_DOC = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "j", "namespace": "default"},
    "spec": {
        "template": {
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
        }
    },
}


@pytest.mark.parametrize(
    ("policy", "finalizer"), [("Orphan", "orphan"), ("Foreground", "foregroundDeletion")]
)
def test_orphan_and_foreground_mark_the_owner_with_their_finalizer(
    api: ApiService, policy: str, finalizer: str
) -> None:
    create(api, deployment_doc("web"))
    marked = api.delete(
        Deployment, "web", "default", options=DeleteRequest(propagation_policy=policy)
    )
    stored = api.get(Deployment, "web", "default")
    assert stored.metadata.finalizers == (finalizer,)
    assert stored.metadata.deletion_timestamp
    assert stored.metadata.deletion_grace_period_seconds == 0
    assert marked.metadata.finalizers == (finalizer,)


def test_background_removes_the_owner_at_once(api: ApiService) -> None:
    create(api, deployment_doc("web"))
    api.delete(Deployment, "web", "default", options=DeleteRequest(propagation_policy="Background"))
    with pytest.raises(errors.NotFoundError):
        api.get(Deployment, "web", "default")


def test_a_job_deleted_without_a_policy_orphans_and_warns(api: ApiService) -> None:
    create(api, JOB_DOC)
    warnings: list[str] = []
    api.delete_object(Job, "j", "default", options=DeleteRequest(), warnings=warnings)
    assert api.get(Job, "j", "default").metadata.finalizers == ("orphan",)
    assert warnings == [
        "child pods are preserved by default when jobs are deleted; set "
        "propagationPolicy=Background to remove them or set propagationPolicy=Orphan to "
        "suppress this warning"
    ]


def test_a_job_deleted_in_the_background_goes_without_a_warning(api: ApiService) -> None:
    create(api, JOB_DOC)
    warnings: list[str] = []
    options = DeleteRequest(propagation_policy="Background")
    api.delete_object(Job, "j", "default", options=options, warnings=warnings)
    assert warnings == []
    with pytest.raises(errors.NotFoundError):
        api.get(Job, "j", "default")


def test_kinds_the_collector_does_not_watch_are_removed_whatever_the_policy(
    api: ApiService,
) -> None:
    # kubeprio's collector acts only on COLLECTED_OWNER_KINDS: a finalizer on a ConfigMap
    # would never be removed, so its delete removes it as before.
    api.create(ConfigMap(metadata=ObjectMeta(name="c", namespace="default")))
    api.delete(ConfigMap, "c", "default", options=DeleteRequest(propagation_policy="Foreground"))
    with pytest.raises(errors.NotFoundError):
        api.get(ConfigMap, "c", "default")


def test_dry_run_orphan_answers_the_marked_object_and_stores_nothing(api: ApiService) -> None:
    create(api, deployment_doc("web"))
    before: Any = api.get(Deployment, "web", "default")
    options = DeleteRequest(propagation_policy="Orphan", dry_run=True)
    answered = api.delete(Deployment, "web", "default", options=options)
    assert answered.metadata.finalizers == ("orphan",)
    assert api.get(Deployment, "web", "default") == before
