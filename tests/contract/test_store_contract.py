"""The ``Store`` contract: every back-end passes this one suite (issue 2 §6, issue 5 "Storage").

The rules are those Kubernetes relies on from its storage layer, as pinned down by
upstream's shared storage tests (``staging/src/k8s.io/apiserver/pkg/storage/testing/
store_tests.go``: RunTestCreate, RunTestGet, RunTestGuaranteedUpdate, RunTestList,
RunTestConditionalDelete; ``watcher_tests.go``: RunTestWatch, RunTestWatchFromNoneZero,
RunTestDeleteTriggerWatch, RunTestWatchDeleteEventObjectHaveLatestRV) on top of etcd's
revision model: one global revision, compare-and-swap on it, watches that resume from
a revision, and "too old resource version" once history is compacted.

Back-ends: ``memory``; ``sqlite`` (a file under ``tmp_path``); ``sqlite-log`` (SQLite
keeping a single event in memory, so watch replays come from its log table).
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from kubeprio.api import kinds, manifest
from kubeprio.api.core import Pod
from kubeprio.api.meta import ApiObject
from kubeprio.store.errors import (
    KeyExistsError,
    KeyNotFoundError,
    RevisionCompactedError,
    RevisionConflictError,
)
from kubeprio.store.interface import (
    EventType,
    KeyPrefix,
    ObjectKey,
    Store,
    StoreEvent,
    object_revision,
    with_revision,
)
from kubeprio.store.memory import MemoryStore
from kubeprio.store.sqlite import SqliteStore
from tests.builders import node, pod, priority_class
from tests.conftest import REAL_CLUSTERS

Factory = Callable[..., Store]

BACKENDS: dict[str, Callable[..., Store]] = {
    "memory": lambda path, **kw: MemoryStore(**kw),
    "sqlite": lambda path, **kw: SqliteStore(path, **kw),
    "sqlite-log": lambda path, **kw: SqliteStore(path, memory_history=1, **kw),
}
REOPENABLE = {"sqlite", "sqlite-log"}


@pytest.fixture(params=sorted(BACKENDS))
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    """Build stores of the back-end under test (closed at teardown)."""
    made: list[Store] = []

    def make(**kwargs: Any) -> Store:
        store = BACKENDS[request.param](tmp_path / f"store-{len(made)}.db", **kwargs)
        made.append(store)
        return store

    yield make
    for store in made:
        store.close()


@pytest.fixture
def store(make_store: Factory) -> Store:
    return make_store()


def pod_key(name: str, namespace: str = "default") -> ObjectKey:
    return ObjectKey("pods", namespace, name)


def pc_key(name: str) -> ObjectKey:
    return ObjectKey("priorityclasses", "", name)


def labelled(obj: Pod, **labels: str) -> Pod:
    return dataclasses.replace(obj, metadata=dataclasses.replace(obj.metadata, labels=labels))


def create_pod(store: Store, name: str, namespace: str = "default", **labels: str) -> ApiObject:
    return store.create(pod_key(name, namespace), pod(name, namespace).labels(**labels).build())


def drain(watch: Any) -> list[tuple[EventType, str, int]]:
    return [(e.type, str(e.key), e.revision) for e in watch.poll()]


# --- create / get ------------------------------------------------------------------------


def test_create_stamps_the_next_global_revision(store: Store) -> None:
    assert store.current_revision() == 0
    a = pod("a").build()
    stored = store.create(pod_key("a"), a)
    assert stored == with_revision(a, 1)
    assert stored.metadata.resource_version == "1"
    pc = store.create(pc_key("high"), priority_class("high", 1000))
    assert pc.metadata.resource_version == "2"
    assert store.current_revision() == 2
    assert store.get(pod_key("a")) == stored


def test_create_overwrites_a_caller_supplied_resource_version(store: Store) -> None:
    """The store owns resourceVersion (upstream's etcd3 store sets it from the revision)."""
    stored = store.create(pod_key("a"), with_revision(pod("a").build(), 77))
    assert object_revision(stored) == 1


def test_create_of_an_existing_key_raises_key_exists_and_changes_nothing(store: Store) -> None:
    """RunTestCreateWithKeyExist: a second create at the key fails."""
    first = create_pod(store, "a", v="1")
    with pytest.raises(KeyExistsError):
        create_pod(store, "a", v="2")
    assert store.get(pod_key("a")) == first
    assert store.current_revision() == 1


@pytest.mark.parametrize(
    "key",
    [pod_key("missing"), pod_key("a", "other"), ObjectKey("nodes", "", "a"), pc_key("a")],
    ids=["name", "namespace", "resource", "cluster-scoped"],
)
def test_get_of_a_missing_key_raises_key_not_found(store: Store, key: ObjectKey) -> None:
    create_pod(store, "a")
    with pytest.raises(KeyNotFoundError):
        store.get(key)


def test_returned_objects_are_frozen_models_equal_to_what_was_written(store: Store) -> None:
    written = pod("a").priority(7).requests(cpu="500m", memory="1Gi").labels(app="web").build()
    stored = store.create(pod_key("a"), written)
    assert isinstance(stored, Pod)
    assert stored == with_revision(written, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        stored.metadata = written.metadata  # type: ignore[misc]
    assert store.get(pod_key("a")) == stored
    assert store.list(KeyPrefix("pods"))[0] == [stored]


# --- list ---------------------------------------------------------------------------------


def _populate(store: Store) -> None:
    for namespace, name in [("b", "z"), ("a", "y"), ("b", "a"), ("a", "x"), ("c", "m")]:
        create_pod(store, name, namespace)
    store.create(ObjectKey("nodes", "", "n2"), node("n2").build())
    store.create(ObjectKey("nodes", "", "n1"), node("n1").build())
    store.create(pc_key("low"), priority_class("low", 1))
    store.delete(pod_key("m", "c"))


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        (KeyPrefix("pods"), ["a/x", "a/y", "b/a", "b/z"]),
        (KeyPrefix("pods", "a"), ["a/x", "a/y"]),
        (KeyPrefix("pods", "b"), ["b/a", "b/z"]),
        (KeyPrefix("pods", "c"), []),
        (KeyPrefix("pods", "nope"), []),
        (KeyPrefix("nodes"), ["/n1", "/n2"]),
        (KeyPrefix("nodes", ""), ["/n1", "/n2"]),
        (KeyPrefix("priorityclasses"), ["/low"]),
        (KeyPrefix("deployments"), []),
    ],
    ids=[
        "all-namespaces",
        "namespace-a",
        "namespace-b",
        "emptied-namespace",
        "unknown-namespace",
        "cluster-scoped",
        "cluster-scoped-empty-namespace",
        "other-resource",
        "empty-resource",
    ],
)
def test_list_returns_the_prefix_sorted_by_key_with_the_current_revision(
    store: Store, prefix: KeyPrefix, expected: list[str]
) -> None:
    """RunTestList: a list selects by resource and namespace, in key order."""
    _populate(store)
    items, revision = store.list(prefix)
    assert [f"{o.metadata.namespace or ''}/{o.metadata.name}" for o in items] == expected
    assert revision == store.current_revision() == 9
    assert all(store.get(ObjectKey(prefix.resource, o.metadata.namespace or "", o.metadata.name or "")) == o for o in items)  # fmt: skip


def test_count_matches_the_list_of_each_resource(store: Store) -> None:
    """``apiserver_storage_objects`` counts without listing: the same number as a list."""
    _populate(store)
    counts = {resource: store.count(resource) for resource in ("pods", "nodes", "priorityclasses")}
    assert counts == {"pods": 4, "nodes": 2, "priorityclasses": 1}
    assert store.count("deployments") == 0
    store.delete(pod_key("x", "a"))
    assert store.count("pods") == len(store.list(KeyPrefix("pods"))[0]) == 3


def test_generation_moves_with_each_change_of_its_resource_and_only_then(store: Store) -> None:
    """``Store.generation``: what caches of a resource's objects compare instead of
    listing (the admission webhook index, the admission policies)."""
    assert store.generation("pods") == store.generation("nodes") == 0
    seen = [store.generation("pods")]

    def moved() -> bool:
        now = store.generation("pods")
        changed = now != seen[-1]
        seen.append(now)
        return changed

    first = create_pod(store, "a", v="1")
    assert moved()
    store.update(pod_key("a"), labelled(first, v="2"), expected_revision=None)
    assert moved()
    nodes = store.generation("nodes")
    store.create(ObjectKey("nodes", "", "n1"), node("n1").build())
    assert not moved()
    assert store.generation("nodes") != nodes
    with pytest.raises(KeyExistsError):
        create_pod(store, "a")
    with pytest.raises(RevisionConflictError):
        store.update(pod_key("a"), labelled(first, v="3"), expected_revision=1)
    assert not moved()  # refused writes change nothing
    store.delete(pod_key("a"))
    assert moved()


# --- update -------------------------------------------------------------------------------


def test_update_with_the_expected_revision_stores_the_next_revision(store: Store) -> None:
    """RunTestGuaranteedUpdate: compare-and-swap on the stored revision succeeds."""
    first = create_pod(store, "a", v="1")
    create_pod(store, "b")
    updated = store.update(pod_key("a"), labelled(first, v="2"), expected_revision=1)
    assert object_revision(updated) == 3
    assert updated.metadata.labels == {"v": "2"}
    assert store.get(pod_key("a")) == updated


def test_update_with_a_stale_revision_conflicts_and_changes_nothing(store: Store) -> None:
    first = create_pod(store, "a", v="1")
    second = store.update(pod_key("a"), labelled(first, v="2"), expected_revision=1)
    with pytest.raises(RevisionConflictError) as caught:
        store.update(pod_key("a"), labelled(first, v="3"), expected_revision=1)
    assert caught.value.current == object_revision(second) == 2
    assert store.get(pod_key("a")) == second
    assert store.current_revision() == 2


def test_update_without_an_expected_revision_is_unconditional(store: Store) -> None:
    first = create_pod(store, "a", v="1")
    store.update(pod_key("a"), labelled(first, v="2"), expected_revision=None)
    last = store.update(pod_key("a"), labelled(first, v="3"), expected_revision=None)
    assert object_revision(last) == 3
    assert store.get(pod_key("a")).metadata.labels == {"v": "3"}


@pytest.mark.parametrize("expected", [None, 1], ids=["unconditional", "conditional"])
def test_update_of_a_missing_key_raises_key_not_found(store: Store, expected: int | None) -> None:
    with pytest.raises(KeyNotFoundError):
        store.update(pod_key("a"), pod("a").build(), expected_revision=expected)
    assert store.current_revision() == 0
    assert store.list(KeyPrefix("pods")) == ([], 0)


# --- delete -------------------------------------------------------------------------------


@pytest.mark.parametrize("expected", [None, 1], ids=["unconditional", "conditional"])
def test_delete_returns_the_last_state_stamped_with_the_deletion_revision(
    store: Store, expected: int | None
) -> None:
    """RunTestWatchDeleteEventObjectHaveLatestRV: the deleted object carries a new revision."""
    stored = create_pod(store, "a", v="1")
    last = store.delete(pod_key("a"), expected_revision=expected)
    assert last == with_revision(stored, 2)
    assert store.current_revision() == 2
    with pytest.raises(KeyNotFoundError):
        store.get(pod_key("a"))
    assert store.list(KeyPrefix("pods")) == ([], 2)


def test_delete_with_a_stale_revision_conflicts_and_changes_nothing(store: Store) -> None:
    """RunTestConditionalDelete: a precondition on a newer object fails."""
    first = create_pod(store, "a", v="1")
    second = store.update(pod_key("a"), labelled(first, v="2"), expected_revision=1)
    with pytest.raises(RevisionConflictError) as caught:
        store.delete(pod_key("a"), expected_revision=1)
    assert caught.value.current == 2
    assert store.get(pod_key("a")) == second
    assert store.current_revision() == 2


def test_delete_of_a_missing_key_raises_key_not_found(store: Store) -> None:
    create_pod(store, "a")
    store.delete(pod_key("a"))
    with pytest.raises(KeyNotFoundError):
        store.delete(pod_key("a"))
    assert store.current_revision() == 2


def test_a_deleted_key_can_be_created_again_at_a_new_revision(store: Store) -> None:
    create_pod(store, "a", v="1")
    store.delete(pod_key("a"))
    again = create_pod(store, "a", v="2")
    assert object_revision(again) == 3
    assert store.get(pod_key("a")) == again


def test_the_revision_rises_by_one_per_write_across_all_resources(store: Store) -> None:
    revisions = [
        object_revision(create_pod(store, "a")),
        object_revision(store.create(pc_key("high"), priority_class("high", 10))),
        object_revision(store.create(ObjectKey("nodes", "", "n1"), node("n1").build())),
        object_revision(create_pod(store, "a", "other")),
        object_revision(
            store.update(pc_key("high"), priority_class("high", 11), expected_revision=2)
        ),
        object_revision(store.delete(pod_key("a"))),
    ]
    assert revisions == [1, 2, 3, 4, 5, 6]
    assert store.current_revision() == 6


# --- watch --------------------------------------------------------------------------------


def test_watch_replays_retained_history_above_the_revision_then_follows(store: Store) -> None:
    """RunTestWatchFromNoneZero: a watch starts after the given revision."""
    a = create_pod(store, "a")
    create_pod(store, "b")
    store.update(pod_key("a"), labelled(a, v="2"), expected_revision=1)
    watch = store.watch(KeyPrefix("pods"), 1)
    assert drain(watch) == [
        (EventType.ADDED, "pods/default/b", 2),
        (EventType.MODIFIED, "pods/default/a", 3),
    ]
    assert drain(watch) == []
    store.delete(pod_key("b"))
    create_pod(store, "c")
    assert drain(watch) == [
        (EventType.DELETED, "pods/default/b", 4),
        (EventType.ADDED, "pods/default/c", 5),
    ]


def test_watch_events_carry_the_stored_objects(store: Store) -> None:
    """RunTestWatch / RunTestDeleteTriggerWatch: ADDED, MODIFIED, then DELETED with the new RV."""
    watch = store.watch(KeyPrefix("pods"), 0)
    added = create_pod(store, "a", v="1")
    modified = store.update(pod_key("a"), labelled(added, v="2"), expected_revision=1)
    deleted = store.delete(pod_key("a"))
    expected = [
        StoreEvent(EventType.ADDED, pod_key("a"), added, 1),
        StoreEvent(EventType.MODIFIED, pod_key("a"), modified, 2),
        StoreEvent(EventType.DELETED, pod_key("a"), deleted, 3),
    ]
    assert watch.poll() == expected
    assert object_revision(deleted) == 3
    assert deleted.metadata.labels == {"v": "2"}
    # The same events, replayed from history, are equal too.
    assert store.watch(KeyPrefix("pods"), 0).poll() == expected


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        (KeyPrefix("pods"), ["pods/a/x", "pods/b/y", "pods/a/x"]),
        (KeyPrefix("pods", "a"), ["pods/a/x", "pods/a/x"]),
        (KeyPrefix("pods", "c"), []),
        (KeyPrefix("priorityclasses"), ["priorityclasses//low"]),
        (KeyPrefix("nodes"), []),
    ],
    ids=["all-namespaces", "one-namespace", "other-namespace", "cluster-scoped", "no-events"],
)
@pytest.mark.parametrize("replayed", [False, True], ids=["live", "replayed"])
def test_watch_delivers_only_events_under_its_prefix(
    store: Store, prefix: KeyPrefix, expected: list[str], replayed: bool
) -> None:
    watch = None if replayed else store.watch(prefix, 0)
    create_pod(store, "x", "a")
    create_pod(store, "y", "b")
    store.create(pc_key("low"), priority_class("low", 1))
    store.delete(pod_key("x", "a"))
    if watch is None:
        watch = store.watch(prefix, 0)
    assert [key for _, key, _ in drain(watch)] == expected


def test_watch_from_the_current_revision_sees_only_new_events(store: Store) -> None:
    create_pod(store, "a")
    watch = store.watch(KeyPrefix("pods"), store.current_revision())
    assert watch.poll() == []
    create_pod(store, "b")
    assert drain(watch) == [(EventType.ADDED, "pods/default/b", 2)]


def test_watch_from_a_future_revision_skips_events_up_to_it(store: Store) -> None:
    """etcd semantics: a watch from revision R delivers events at revisions above R only."""
    create_pod(store, "a")
    watch = store.watch(KeyPrefix("pods"), 3)
    create_pod(store, "b")  # 2
    create_pod(store, "c")  # 3
    assert watch.poll() == []
    create_pod(store, "d")  # 4
    assert drain(watch) == [(EventType.ADDED, "pods/default/d", 4)]


@pytest.mark.parametrize("compact_at", [1, 2, 3, 4, 5, 6, 7], ids=lambda r: f"at-{r}")
def test_compaction_keeps_every_event_above_it_and_refuses_older_watches(
    store: Store, compact_at: int
) -> None:
    """etcd compaction: history at or below the revision goes, everything above stays."""
    a = create_pod(store, "a", v="1")  # 1
    create_pod(store, "b")  # 2
    store.update(pod_key("a"), labelled(a, v="2"), expected_revision=1)  # 3
    store.delete(pod_key("b"))  # 4
    create_pod(store, "b")  # 5
    store.delete(pod_key("a"))  # 6
    create_pod(store, "c")  # 7
    history = store.watch(KeyPrefix("pods"), 0).poll()
    store.compact(compact_at)
    with pytest.raises(RevisionCompactedError) as caught:
        store.watch(KeyPrefix("pods"), compact_at - 1)
    assert (caught.value.requested, caught.value.oldest) == (compact_at - 1, compact_at + 1)
    assert f"too old resource version: {compact_at - 1} ({compact_at + 1})" in str(caught.value)
    for since in range(compact_at, 8):
        assert store.watch(KeyPrefix("pods"), since).poll() == history[since:]
    # Current objects survive compaction, and writes go on at the next revision.
    assert [o.metadata.name for o in store.list(KeyPrefix("pods"))[0]] == ["b", "c"]
    assert object_revision(create_pod(store, "d")) == 8


def test_compaction_beyond_the_current_revision_stops_at_it(store: Store) -> None:
    create_pod(store, "a")
    store.compact(100)
    watch = store.watch(KeyPrefix("pods"), 1)
    create_pod(store, "b")
    assert drain(watch) == [(EventType.ADDED, "pods/default/b", 2)]
    with pytest.raises(RevisionCompactedError):
        store.watch(KeyPrefix("pods"), 0)


def test_compaction_keeps_watches_from_zero_working_after_deletes(store: Store) -> None:
    """RunTestWatchFromZero: compacted older versions never break a watch from the compaction point."""
    a = create_pod(store, "a", v="1")
    store.update(pod_key("a"), labelled(a, v="2"), expected_revision=1)
    create_pod(store, "b")
    store.delete(pod_key("b"))
    store.compact(store.current_revision())
    watch = store.watch(KeyPrefix("pods"), store.current_revision())
    store.delete(pod_key("a"))
    [event] = watch.poll()
    assert event.type is EventType.DELETED
    assert event.object.metadata.labels == {"v": "2"}
    assert object_revision(event.object) == 5


def test_history_beyond_the_limit_is_compacted(make_store: Factory) -> None:
    store = make_store(history_limit=3)
    for index in range(10):
        create_pod(store, f"p{index}")
    assert [rev for _, _, rev in drain(store.watch(KeyPrefix("pods"), 7))] == [8, 9, 10]
    with pytest.raises(RevisionCompactedError) as caught:
        store.watch(KeyPrefix("pods"), 6)
    assert (caught.value.requested, caught.value.oldest) == (6, 8)
    assert len(store.list(KeyPrefix("pods"))[0]) == 10


def test_history_limit_must_be_positive(make_store: Factory) -> None:
    with pytest.raises(ValueError, match="positive"):
        make_store(history_limit=0)


def test_a_closed_watch_gets_no_more_events_but_keeps_pending_ones(store: Store) -> None:
    watch = store.watch(KeyPrefix("pods"), 0)
    calls: list[int] = []
    create_pod(store, "a")
    watch.set_listener(lambda: calls.append(1))
    assert calls == [1]  # pending events wake a new listener at once
    watch.close()
    assert watch.closed
    assert calls == [1, 1]  # closing wakes the listener so a streaming request can end
    create_pod(store, "b")
    assert drain(watch) == [(EventType.ADDED, "pods/default/a", 1)]
    assert watch.poll() == []
    watch.close()  # idempotent
    assert calls == [1, 1]


def test_the_listener_is_called_once_per_delivered_event(store: Store) -> None:
    watch = store.watch(KeyPrefix("pods", "a"), 0)
    calls: list[int] = []
    watch.set_listener(lambda: calls.append(len(calls)))
    assert calls == []
    create_pod(store, "x", "a")
    create_pod(store, "y", "b")  # another namespace: no wake-up
    store.delete(pod_key("x", "a"))
    assert calls == [0, 1]
    watch.set_listener(None)
    create_pod(store, "z", "a")
    assert calls == [0, 1]
    assert len(watch.poll()) == 3


def test_closing_the_store_closes_its_watches(make_store: Factory) -> None:
    store = make_store()
    watch = store.watch(KeyPrefix("pods"), 0)
    store.close()
    assert watch.closed


# --- real objects -------------------------------------------------------------------------


def _real_objects() -> list[tuple[ObjectKey, ApiObject]]:
    found: dict[ObjectKey, ApiObject] = {}
    for path in sorted(REAL_CLUSTERS.iterdir()):
        if path.suffix not in (".json", ".yaml"):
            continue
        for document in manifest.parse_text(path.read_text(), path.name):
            obj: Any = manifest.decode_document(document)
            info = kinds.for_object(obj)
            namespace = (obj.metadata.namespace or "") if info.namespaced else ""
            found[ObjectKey(info.plural, namespace, obj.metadata.name)] = obj
    return sorted(found.items(), key=lambda item: item[0])


REAL_OBJECTS = _real_objects()


def test_real_cluster_objects_come_back_equal_from_reads_and_replays(store: Store) -> None:
    """Every field of unedited dumps (managedFields, unknown keys) survives the store."""
    stored = {key: store.create(key, obj) for key, obj in REAL_OBJECTS}
    assert {key: store.get(key) for key in stored} == stored
    resources = sorted({key.resource for key in stored})
    for resource in resources:
        events = store.watch(KeyPrefix(resource), 0).poll()
        assert {e.key: e.object for e in events} == {
            k: v for k, v in stored.items() if k.resource == resource
        }


def test_there_are_real_objects_of_several_kinds() -> None:
    assert len({key.resource for key, _ in REAL_OBJECTS}) >= 5


# --- model-based (stateful) ---------------------------------------------------------------

KEYS = [pod_key(n, ns) for ns in ("a", "b") for n in ("x", "y", "z")] + [pc_key(n) for n in "pq"]
PREFIXES = [KeyPrefix("pods"), KeyPrefix("pods", "a"), KeyPrefix("pods", "b"), KeyPrefix("priorityclasses")]  # fmt: skip


def _object(key: ObjectKey, value: int) -> ApiObject:
    if key.resource == "pods":
        return pod(key.name, key.namespace).labels(v=str(value)).build()
    return priority_class(key.name, value)


class StoreMachine(RuleBasedStateMachine):
    """Random writes against a back-end and against a dict; both must agree at every step.

    Also checks that a failed write (conflict, missing or existing key) changes nothing,
    that long-lived watches see exactly the model's events, that a watch from any past
    revision replays exactly the model's events after it or, before the compacted
    revision (explicit, or ``history_limit`` revisions back), raises
    ``RevisionCompactedError``, and (SQLite) that a reopened store is the same store.
    """

    backend = "memory"
    history_limit: int | None = None

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.TemporaryDirectory()
        self.path = Path(self.tmp.name) / "store.db"
        self.store = self._open()
        self.model: dict[ObjectKey, ApiObject] = {}
        self.events: list[StoreEvent] = []
        self.explicitly_compacted = 0
        self.watches: list[tuple[KeyPrefix, Any, list[StoreEvent]]] = [
            (prefix, self.store.watch(prefix, 0), []) for prefix in PREFIXES[:2]
        ]

    def _open(self) -> Store:
        limit = {} if self.history_limit is None else {"history_limit": self.history_limit}
        return BACKENDS[self.backend](self.path, **limit)

    @property
    def compacted(self) -> int:
        by_limit = self.revision - self.history_limit if self.history_limit else 0
        return max(self.explicitly_compacted, by_limit)

    def teardown(self) -> None:
        self.store.close()
        self.tmp.cleanup()

    @property
    def revision(self) -> int:
        return self.events[-1].revision if self.events else 0

    def _record(self, event_type: EventType, key: ObjectKey, obj: ApiObject) -> None:
        revision = self.revision + 1
        stored = with_revision(obj, revision)
        self.events.append(StoreEvent(event_type, key, stored, revision))
        if event_type is EventType.DELETED:
            del self.model[key]
        else:
            self.model[key] = stored

    @initialize(keys=st.lists(st.sampled_from(KEYS), unique=True, max_size=len(KEYS)))
    def start(self, keys: list[ObjectKey]) -> None:
        assert self.store.current_revision() == 0
        for key in keys:  # start from a populated store, so most writes can succeed
            self.create(key, 0)

    @rule(key=st.sampled_from(KEYS), value=st.integers(0, 99))
    def create(self, key: ObjectKey, value: int) -> None:
        obj = _object(key, value)
        if key in self.model:
            with pytest.raises(KeyExistsError):
                self.store.create(key, obj)
            return
        result = self.store.create(key, obj)
        self._record(EventType.ADDED, key, obj)
        assert result == self.model[key]

    def _pick(self, data: st.DataObject) -> ObjectKey:
        """Mostly a stored key (so writes mostly succeed), sometimes any key."""
        if self.model and data.draw(st.integers(0, 4), label="stored") > 0:
            return data.draw(st.sampled_from(sorted(self.model)), label="key")
        return data.draw(st.sampled_from(KEYS), label="key")

    @rule(
        data=st.data(),
        value=st.integers(0, 99),
        expect=st.sampled_from(["none", "current", "stale"]),
    )
    def update(self, data: st.DataObject, value: int, expect: str) -> None:
        key = self._pick(data)
        obj = _object(key, value)
        current = self.model.get(key)
        expected = self._expected(current, expect)
        if current is None:
            with pytest.raises(KeyNotFoundError):
                self.store.update(key, obj, expected_revision=expected)
        elif expect == "stale":
            with pytest.raises(RevisionConflictError) as caught:
                self.store.update(key, obj, expected_revision=expected)
            assert caught.value.current == object_revision(current)
        else:
            result = self.store.update(key, obj, expected_revision=expected)
            self._record(EventType.MODIFIED, key, obj)
            assert result == self.model[key]

    @rule(data=st.data(), expect=st.sampled_from(["none", "current", "stale"]))
    def delete(self, data: st.DataObject, expect: str) -> None:
        key = self._pick(data)
        current = self.model.get(key)
        expected = self._expected(current, expect)
        if current is None:
            with pytest.raises(KeyNotFoundError):
                self.store.delete(key, expected_revision=expected)
        elif expect == "stale":
            with pytest.raises(RevisionConflictError):
                self.store.delete(key, expected_revision=expected)
        else:
            result = self.store.delete(key, expected_revision=expected)
            self._record(EventType.DELETED, key, current)
            assert result == self.events[-1].object

    @staticmethod
    def _expected(current: ApiObject | None, expect: str) -> int | None:
        if expect == "none":
            return None
        revision = object_revision(current) if current is not None else 1
        return revision if expect == "current" else revision + 1

    @rule(data=st.data())
    def get(self, data: st.DataObject) -> None:
        key = self._pick(data)
        if key in self.model:
            assert self.store.get(key) == self.model[key]
        else:
            with pytest.raises(KeyNotFoundError):
                self.store.get(key)

    @rule(data=st.data())
    def compact(self, data: st.DataObject) -> None:
        revision = data.draw(st.integers(0, self.revision + 2), label="revision")
        self.store.compact(revision)
        self.explicitly_compacted = max(self.explicitly_compacted, min(revision, self.revision))
        for prefix in PREFIXES:  # everything above the compacted revision is still there
            watch = self.store.watch(prefix, self.compacted)
            assert watch.poll() == [
                e for e in self.events if e.revision > self.compacted and prefix.contains(e.key)
            ]
            watch.close()

    @rule(prefix=st.sampled_from(PREFIXES), data=st.data())
    def watch_from_the_past(self, prefix: KeyPrefix, data: st.DataObject) -> None:
        since = data.draw(st.integers(0, self.revision + 2), label="since")
        if since < self.compacted:
            with pytest.raises(RevisionCompactedError) as caught:
                self.store.watch(prefix, since)
            assert caught.value.oldest == self.compacted + 1
            return
        watch = self.store.watch(prefix, since)
        assert watch.poll() == [
            e for e in self.events if e.revision > since and prefix.contains(e.key)
        ]
        watch.close()

    @precondition(lambda self: self.backend in REOPENABLE)
    @rule()
    def reopen(self) -> None:
        for _, watch, seen in self.watches:
            seen.extend(watch.poll())
        self.store.close()
        assert all(watch.closed for _, watch, _ in self.watches)
        self.store = self._open()
        watches = []
        for prefix, _, seen in self.watches:
            since = seen[-1].revision if seen else 0
            if since < self.compacted:
                # Resuming is impossible: a client relists, which we model as seeing
                # every event so far, and watches from the current revision.
                with pytest.raises(RevisionCompactedError):
                    self.store.watch(prefix, since)
                seen[:] = [e for e in self.events if prefix.contains(e.key)]
                since = self.revision
            watches.append((prefix, self.store.watch(prefix, since), seen))
        self.watches = watches
        assert isinstance(self.store, SqliteStore)
        assert self.store.verify() == []

    @invariant()
    def agrees_with_the_model(self) -> None:
        assert self.store.current_revision() == self.revision
        for prefix in PREFIXES:
            expected = [obj for key, obj in sorted(self.model.items()) if prefix.contains(key)]
            assert self.store.list(prefix) == (expected, self.revision)
        for prefix, watch, seen in self.watches:
            seen.extend(watch.poll())
            assert seen == [e for e in self.events if prefix.contains(e.key)]


@pytest.mark.parametrize("history_limit", [None, 6], ids=["unlimited", "limit-6"])
@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_store_agrees_with_a_dict_model_over_random_operations(
    backend: str, history_limit: int | None
) -> None:
    machine = type(
        f"StoreMachine_{backend}",
        (StoreMachine,),
        {"backend": backend, "history_limit": history_limit},
    )
    run_state_machine_as_test(
        machine, settings=settings(max_examples=30, stateful_step_count=30, deadline=None)
    )


# --- batches (group commit) ------------------------------------------------------------------


def test_writes_in_a_batch_are_read_at_once_and_watched_in_order_by_its_end(
    store: Store,
) -> None:
    """``Store.batch``: reads inside see every write at once; revisions stay one per
    write; watchers get all of the batch's events, in order, once it ends; batches nest."""
    watch = store.watch(KeyPrefix("pods"), 0)
    with store.batch():
        a = create_pod(store, "a")
        assert store.get(pod_key("a")) == a
        with store.batch():
            b = store.update(pod_key("a"), labelled(a, step="2"), expected_revision=1)
        c = create_pod(store, "c")
        store.delete(pod_key("c"))
        assert store.list(KeyPrefix("pods")) == ([b], 4)
        assert store.current_revision() == 4
    assert drain(watch) == [
        (EventType.ADDED, "pods/default/a", 1),
        (EventType.MODIFIED, "pods/default/a", 2),
        (EventType.ADDED, "pods/default/c", 3),
        (EventType.DELETED, "pods/default/c", 4),
    ]
    assert object_revision(c) == 3
    assert object_revision(store.create(pod_key("d"), pod("d").build())) == 5
