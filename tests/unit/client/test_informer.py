"""Informers: list + watch into a local cache that always converges to the store.

The informer mirrors client-go's reflector and indexer: it lists, watches from the
list's revision, applies events in order, relists when its watch ends, and reports
every change to its handlers. Tests drive it against the in-process ``ApiService``;
the property test checks that after any sequence of writes (and watch restarts) the
cache, the index and the handlers' view all equal what the API lists.
"""

from __future__ import annotations

import dataclasses
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubeprio.admission.chain import AdmissionChain
from kubeprio.api.core import Binding, ObjectReference, Pod, PodStatus
from kubeprio.api.meta import ObjectMeta
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import DeleteRequest
from kubeprio.store.memory import MemoryStore
from tests.builders import pod
from tests.conftest import ManualClock


def _api() -> ApiService:
    return ApiService(
        MemoryStore(), clock=ManualClock(), rng=random.Random(3), admission=AdmissionChain()
    )


class Recorder:
    """Handlers that rebuild the informer's contents from the callbacks alone."""

    def __init__(self) -> None:
        self.state: dict[tuple[str, str], Pod] = {}
        self.log: list[tuple[str, str]] = []

    def add(self, obj: Pod) -> None:
        key = (obj.metadata.namespace or "", obj.metadata.name or "")
        assert key not in self.state
        self.state[key] = obj
        self.log.append(("add", key[1]))

    def update(self, old: Pod, new: Pod) -> None:
        key = (new.metadata.namespace or "", new.metadata.name or "")
        assert self.state[key] == old
        self.state[key] = new
        self.log.append(("update", key[1]))

    def delete(self, obj: Pod) -> None:
        key = (obj.metadata.namespace or "", obj.metadata.name or "")
        assert key in self.state
        del self.state[key]
        self.log.append(("delete", key[1]))

    def handler(self) -> FuncHandler[Pod]:
        return FuncHandler(self.add, self.update, self.delete)


def _node_index(obj: Pod) -> list[str]:
    return [obj.spec.node_name] if obj.spec and obj.spec.node_name else []


def _app_index(obj: Pod) -> list[str]:
    """The ``app`` label, and once more with the node: values that change on relabels
    and on binds, and two per object."""
    app = (obj.metadata.labels or {}).get("app")
    if not app:
        return []
    node = obj.spec.node_name if obj.spec and obj.spec.node_name else ""
    return [app, f"{app}/{node}"]


def test_start_lists_and_replays_to_handlers() -> None:
    api = _api()
    api.create(pod("a").build())
    informer = Informer(api, Pod)
    recorder = Recorder()
    informer.add_handler(recorder.handler())
    informer.start()
    assert informer.has_synced
    assert [p.metadata.name for p in informer.list()] == ["a"]
    assert recorder.log == [("add", "a")]


def test_pump_applies_events_in_order() -> None:
    api = _api()
    informer = Informer(api, Pod)
    recorder = Recorder()
    informer.add_handler(recorder.handler())
    informer.start()
    created = api.create(pod("a").build())
    api.update(
        dataclasses.replace(
            created, metadata=dataclasses.replace(created.metadata, labels={"x": "1"})
        )
    )
    api.create(pod("b").build())
    api.delete(Pod, "a", "default")
    informer.pump()
    assert recorder.log == [
        ("add", "a"),
        ("update", "a"),
        ("add", "b"),
        ("update", "a"),
        ("delete", "a"),
    ]
    assert [p.metadata.name for p in informer.list()] == ["b"]
    assert informer.resource_version == str(api.store.current_revision())


def test_handler_added_late_sees_cached_objects_as_adds() -> None:
    api = _api()
    for name in ("b", "a"):
        api.create(pod(name).build())
    informer = Informer(api, Pod)
    informer.start()
    recorder = Recorder()
    informer.add_handler(recorder.handler())
    assert recorder.log == [("add", "a"), ("add", "b")]


def test_index_follows_updates() -> None:
    api = _api()
    informer = Informer(api, Pod)
    informer.add_index("node", _node_index)
    informer.start()
    api.create(pod("a").build())
    api.bind(
        Binding(
            metadata=ObjectMeta(name="a", namespace="default"), target=ObjectReference(name="n1")
        )
    )
    informer.pump()
    assert [p.metadata.name for p in informer.by_index("node", "n1")] == ["a"]
    api.delete(Pod, "a", "default", options=DeleteRequest(grace_period_seconds=0))
    informer.pump()
    assert informer.by_index("node", "n1") == []


def test_relist_after_the_watch_ends_reports_the_differences() -> None:
    """A closed watch is followed by a relist whose differences reach the handlers."""
    api = _api()
    api.create(pod("a").build())
    informer = Informer(api, Pod)
    recorder = Recorder()
    informer.add_handler(recorder.handler())
    informer.start()
    informer.stop()
    api.create(pod("b").build())
    api.delete(Pod, "a", "default")
    api.store.compact(api.store.current_revision())
    informer.pump()  # drains what the closed watch still holds, then relists
    informer.pump()
    assert [p.metadata.name for p in informer.list()] == ["b"]
    assert recorder.state.keys() == {("default", "b")}


def test_selector_informer_drops_objects_leaving_the_selector() -> None:
    api = _api()
    created = api.create(pod("a").labels(app="web").build())
    informer = Informer(api, Pod, label_selector="app=web")
    recorder = Recorder()
    informer.add_handler(recorder.handler())
    informer.start()
    api.update(
        dataclasses.replace(
            created, metadata=dataclasses.replace(created.metadata, labels={"app": "db"})
        )
    )
    informer.pump()
    assert informer.list() == []
    assert recorder.log == [("add", "a"), ("delete", "a")]


# --- property: the cache converges to the store --------------------------------------------------

NAMES = ["a", "b", "c", "d"]
NAMESPACES = ["default", "kube-system"]
actions = st.lists(
    st.tuples(
        st.sampled_from(
            ["create", "relabel", "bind", "status", "delete", "force", "pump", "restart"]
        ),
        st.sampled_from(NAMES),
        st.sampled_from(NAMESPACES),
        st.sampled_from(["web", "db", ""]),
    ),
    max_size=40,
)


def _apply(api: ApiService, action: str, name: str, namespace: str, label: str) -> None:
    current = next((p for p in api.list(Pod, namespace).items if p.metadata.name == name), None)
    if action == "create" and current is None:
        api.create(
            pod(name, namespace).labels(app=label).build()
            if label
            else pod(name, namespace).build()
        )
    elif current is None:
        return
    elif action == "relabel":
        labels = {"app": label} if label else None
        api.update(
            dataclasses.replace(
                current, metadata=dataclasses.replace(current.metadata, labels=labels)
            )
        )
    elif (
        action == "bind"
        and current.spec is not None
        and not current.spec.node_name
        and not current.metadata.deletion_timestamp
    ):
        api.bind(
            Binding(
                metadata=ObjectMeta(name=name, namespace=namespace),
                target=ObjectReference(name="n1"),
            )
        )
    elif action == "status":
        api.update_status(
            dataclasses.replace(
                current, status=dataclasses.replace(current.status or PodStatus(), phase="Running")
            )
        )
    elif action == "delete":
        api.delete(Pod, name, namespace)
    elif action == "force":
        api.delete(Pod, name, namespace, options=DeleteRequest(grace_period_seconds=0))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(actions, st.sampled_from([None, "app=web", "app!=web"]), st.sampled_from([None, "default"]))
def test_cache_equals_store_after_any_writes(
    steps: list[tuple[str, str, str, str]], selector: str | None, namespace: str | None
) -> None:
    api = _api()
    api.create(pod("seed", "default").labels(app="web").build())
    informer = Informer(api, Pod, namespace, label_selector=selector)
    informer.add_index("node", _node_index)
    informer.add_index("app", _app_index)
    recorder = Recorder()
    informer.add_handler(recorder.handler())
    informer.start()
    for action, name, ns, label in steps:
        if action == "pump":
            informer.pump()
        elif action == "restart":
            informer.stop()
        else:
            _apply(api, action, name, ns, label)
    informer.pump()
    informer.pump()  # a second pump relists if the last one found the watch closed
    expected = api.list(Pod, namespace, label_selector=selector).items
    assert informer.list() == expected
    assert [recorder.state[k] for k in sorted(recorder.state)] == expected
    bound = [p for p in expected if p.spec and p.spec.node_name == "n1"]
    assert informer.by_index("node", "n1") == bound
    # An index whose values change on relabels and binds equals one computed from
    # scratch (no stale values).
    for value in ("web", "db", "web/", "db/", "n1", ""):
        assert informer.by_index("app", value) == [p for p in expected if value in _app_index(p)]


def test_handlers_run_in_registration_order_whatever_their_shape() -> None:
    """The informer resolves each handler's callbacks once (a plain FuncHandler's
    functions are called directly); order and overrides are kept."""
    calls: list[str] = []

    class Overriding(FuncHandler[Pod]):
        def on_add(self, obj: Pod) -> None:
            calls.append(f"override-add {obj.metadata.name}")

    class Plain:
        def on_add(self, obj: Pod) -> None:
            calls.append(f"plain-add {obj.metadata.name}")

        def on_update(self, old: Pod, new: Pod) -> None:
            calls.append(f"plain-update {new.metadata.name}")

        def on_delete(self, obj: Pod) -> None:
            calls.append(f"plain-delete {obj.metadata.name}")

    api = _api()
    informer = Informer(api, Pod)
    informer.add_handler(
        FuncHandler(on_update=lambda _o, p: calls.append(f"f-update {p.metadata.name}"))
    )
    informer.add_handler(Overriding(on_add=lambda p: calls.append("never")))
    informer.add_handler(Plain())
    informer.add_handler(FuncHandler(on_add=lambda p: calls.append(f"f-add {p.metadata.name}")))
    informer.start()
    created = api.create(pod("a").build())
    api.update(
        dataclasses.replace(
            created, metadata=dataclasses.replace(created.metadata, labels={"x": "1"})
        )
    )
    api.delete(Pod, "a", "default", options=DeleteRequest(grace_period_seconds=0))
    informer.pump()
    assert calls == [
        "override-add a",
        "plain-add a",
        "f-add a",
        "f-update a",  # the label
        "plain-update a",
        "f-update a",  # the deletion mark
        "plain-update a",
        "plain-delete a",
    ]
