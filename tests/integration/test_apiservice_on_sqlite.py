"""The in-process API over SqliteStore: the full write path survives a restart (issue 5).

``kubeprio serve`` runs ``ApiService`` on ``SqliteStore``; a restart reopens the file and
builds a new service. Everything acknowledged before must be there, bootstrap must not
duplicate its objects, and a watch resumes from a resourceVersion handed out before
the restart (served from the store's log), as an informer does after a server restart.
"""

from __future__ import annotations

import random
from pathlib import Path

from kubeprio.admission.chain import AdmissionChain
from kubeprio.api.core import Binding, Namespace, ObjectReference, Pod
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.scheduling import PriorityClass
from kubeprio.apiserver.service import ApiService
from kubeprio.client.protocol import WatchEventType
from kubeprio.store.sqlite import SqliteStore
from tests.builders import pod, priority_class
from tests.conftest import ManualClock


def _service(store: SqliteStore, clock: ManualClock) -> ApiService:
    return ApiService(store, clock=clock, rng=random.Random(7), admission=AdmissionChain())


def test_objects_written_through_the_api_survive_a_restart(tmp_path: Path) -> None:
    path, clock = tmp_path / "kubeprio.db", ManualClock()
    with SqliteStore(path) as store:
        api = _service(store, clock)
        api.create(priority_class("high", 1000))
        api.create(pod("a").build())
        api.create(pod("b").build())
        api.bind(
            Binding(
                metadata=ObjectMeta(name="a", namespace="default"),
                target=ObjectReference(kind="Node", name="n1"),
            )
        )
        resume_from = api.list(Pod, "default").resource_version
        api.delete(Pod, "b", "default")
        api.create(pod("c").build())
        before = {kind: api.list(kind).items for kind in (Namespace, PriorityClass, Pod)}
        revision = store.current_revision()
    with SqliteStore(path) as store:
        api = _service(store, clock)  # bootstraps again: must find everything in place
        assert store.current_revision() == revision
        assert {kind: api.list(kind).items for kind in (Namespace, PriorityClass, Pod)} == before
        assert api.get(Pod, "a", "default").spec.node_name == "n1"  # type: ignore[union-attr]
        watch = api.watch(Pod, "default", resource_version=resume_from)
        events = [(e.type, e.object.metadata.name) for e in watch.poll()]
        # A pod delete first writes the deletion mark, then removes the object (upstream
        # Store.Delete: updateForGracefulDeletionAndFinalizers, then the grace-0 delete).
        assert events == [
            (WatchEventType.MODIFIED, "b"),
            (WatchEventType.DELETED, "b"),
            (WatchEventType.ADDED, "c"),
        ]
        assert store.verify() == []
