"""What every controller shares: a clock-driven work queue, expectations, the retry policy.

* ``WorkQueue`` mirrors client-go's rate-limiting work queue for one worker: a key is
  queued at most once; ``add_after`` delays it (the earliest request wins);
  ``add_rate_limited`` retries it after ``5 ms * 2^failures`` capped at 1000 s
  (``DefaultTypedControllerRateLimiter``'s per-item part; the global 10 qps bucket is
  left out: in virtual time it would only slow the simulated control plane down);
  ``forget`` resets the failure count. Keys come out in (due time, insertion) order.
* ``Expectations`` mirrors ``pkg/controller/controller_utils.go``
  ``ControllerExpectations``/``UIDTrackingControllerExpectations``: after a controller
  creates or deletes pods it does not act on that owner again until its informer has
  seen them (or 5 minutes passed), so a stale cache never makes it create twice.
* ``Controller`` runs ``reconcile(key)`` for every due key in ``run_once()``. Outcomes:
  success forgets the key; ``TemporaryError(delay)`` requeues after ``delay``;
  ``PermanentError`` records a Warning event (reason ``ReconcileFailed``) on the object
  and drops the key; an API error (any ``KubeprioError``) is retried with rate-limited
  backoff; a write waiting on admission webhooks (``client.writepending``) is retried
  once their answers are in. Anything else is a bug and propagates (the simulator aborts on it).

Drivers call ``run_once()`` when ``next_wakeup()`` is due. No threads, no sleeping;
time from the injected ``Clock``. Must not import ``apiserver``, ``store``, ``admission``.
"""

from __future__ import annotations

import abc
import functools
import heapq
import random
from collections.abc import Callable, Iterable
from typing import Any, Final, Protocol, TypeVar

from kubeprio.api.meta import ApiObject, LabelSelector
from kubeprio.client import record
from kubeprio.client.answeredretry import retryable
from kubeprio.client.informer import Informer
from kubeprio.client.protocol import Client
from kubeprio.client.writepending import WritePendingError
from kubeprio.clock import Clock
from kubeprio.errors import KubeprioError, PermanentError, TemporaryError

DEFAULT_BASE_DELAY: Final = 0.005
DEFAULT_MAX_DELAY: Final = 1000.0
EXPECTATIONS_TIMEOUT: Final = 300.0


NAMESPACE_INDEX: Final = "namespace"
"""The informer index every controller shares: objects by namespace (``by_namespace``)."""


CONTROLLER_INDEX: Final = "controller-uid"
"""The informer index of the workload controllers: objects by their controller's UID
(``by_controller``); one per informer, however many controllers add it."""


def by_controller(obj: ApiObject) -> list[str]:
    """``CONTROLLER_INDEX``'s key: the UID in ``obj``'s controller reference, if any."""
    ref = obj.metadata.controller_ref()
    return [ref.uid] if ref is not None and ref.uid else []


ORPHAN_INDEX: Final = "orphans-by-label"
"""The informer index of objects without a controller, by ``<namespace>\\0`` and
``<namespace>\\0<key>=<value>`` (``by_orphan_labels``): where a workload controller finds
the orphans its selector could adopt without scanning the namespace."""


def by_orphan_labels(obj: ApiObject) -> list[str]:
    """``ORPHAN_INDEX``'s keys: none for a controlled object; else the namespace, and the
    namespace with each of its labels."""
    if obj.metadata.controller_ref() is not None:
        return []
    namespace = obj.metadata.namespace or ""
    labels = obj.metadata.labels or {}
    return [f"{namespace}\0", *(f"{namespace}\0{k}={v}" for k, v in labels.items())]


_Owned = TypeVar("_Owned", bound=ApiObject)


def claim_candidates(
    informer: Informer[_Owned], owner: ApiObject, selector: LabelSelector | None
) -> list[_Owned]:
    """What ``ClaimPods``/``ClaimControllerRevisions`` look at: the objects ``owner``
    controls (``CONTROLLER_INDEX``) and the orphans of its namespace its selector could
    match (``ORPHAN_INDEX``, by one of its ``matchLabels``, else every orphan there).
    The informer needs both indexes."""
    namespace = owner.metadata.namespace or ""
    match_labels = (selector.match_labels if selector else None) or {}
    orphan_key = f"{namespace}\0"
    if match_labels:
        label = min(match_labels)
        orphan_key += f"{label}={match_labels[label]}"
    candidates = [
        *informer.by_index(CONTROLLER_INDEX, owner.metadata.uid or ""),
        *informer.by_index(ORPHAN_INDEX, orphan_key),
    ]
    return [c for c in candidates if c.metadata.namespace == owner.metadata.namespace]


_Owner = TypeVar("_Owner", covariant=True)


class OwnerLookup(Protocol[_Owner]):
    """What ``resolve_controller_ref`` reads owners from (an informer)."""

    def get(self, name: str, namespace: str | None = None) -> _Owner | None:
        """The cached object ``namespace/name``, if any."""
        ...


def resolve_controller_ref(
    obj: ApiObject, kind: str, owners: OwnerLookup[_Owner], namespace: str | None = None
) -> _Owner | None:
    """``resolveControllerRef``: the ``kind`` object in ``owners`` that controls ``obj``
    (in ``obj``'s namespace unless given), or None when its controller reference names
    another kind, or an owner that no longer exists (a different uid: same name, new object)."""
    ref = obj.metadata.controller_ref()
    if ref is None or ref.kind != kind:
        return None
    owner: Any = owners.get(
        ref.name or "", obj.metadata.namespace if namespace is None else namespace
    )
    return owner if owner is not None and owner.metadata.uid == ref.uid else None


def by_namespace(obj: ApiObject) -> list[str]:
    """``cache.MetaNamespaceIndexFunc``: the object's namespace."""
    return [obj.metadata.namespace or ""]


def object_key(obj: ApiObject) -> str:
    """``cache.MetaNamespaceKeyFunc``: ``namespace/name``, or ``name`` if cluster-scoped."""
    meta = obj.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name or ""


def split_key(key: str) -> tuple[str, str]:
    """``cache.SplitMetaNamespaceKey``: (namespace, name)."""
    namespace, _, name = key.rpartition("/")
    return namespace, name


class WorkQueue:
    """Deduplicated keys with due times; rate-limited requeues keyed by object key."""

    def __init__(
        self,
        clock: Clock,
        *,
        base_delay: float = DEFAULT_BASE_DELAY,
        max_delay: float = DEFAULT_MAX_DELAY,
    ) -> None:
        self._clock = clock
        self._base = base_delay
        self._max = max_delay
        self._due: dict[str, tuple[float, int]] = {}
        self._heap: list[tuple[float, int, str]] = []
        self._seq = 0
        self._failures: dict[str, int] = {}
        self.on_scheduled: Callable[[float], None] | None = None
        """Called with a key's new due time whenever one is set (only ever earlier than
        the key's old one), so a driver of many queues can skip the quiet ones
        (``sim.duegroup``); None: nobody listens."""

    def __len__(self) -> int:
        return len(self._due)

    def __contains__(self, key: object) -> bool:
        return key in self._due

    def add(self, key: str) -> None:
        """Queue ``key`` now."""
        self._schedule(key, self._clock.now())

    def add_after(self, key: str, delay: float) -> None:
        """Queue ``key`` after ``delay`` seconds (sooner if it is already due sooner)."""
        self._schedule(key, self._clock.now() + max(delay, 0.0))

    def add_when_answered(self, key: str, pending: WritePendingError) -> None:
        """Queue ``key`` again as soon as the webhook answers its write waits on are in
        (at the latest after their deadline): upstream's worker would block on the call,
        then go on."""
        self.add_after(key, pending.retry_after)
        pending.when_answered(functools.partial(self.add, key))

    def add_rate_limited(self, key: str) -> None:
        """Queue ``key`` after its exponential backoff, and count the failure."""
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        self.add_after(key, min(self._base * 2**failures, self._max))

    def forget(self, key: str) -> None:
        """Reset ``key``'s failure count."""
        self._failures.pop(key, None)

    def num_requeues(self, key: str) -> int:
        """How many rate-limited requeues ``key`` had since it was last forgotten."""
        return self._failures.get(key, 0)

    def _schedule(self, key: str, when: float) -> None:
        existing = self._due.get(key)
        if existing is not None and existing[0] <= when:
            return
        self._seq += 1
        self._due[key] = (when, self._seq)
        heapq.heappush(self._heap, (when, self._seq, key))
        if self.on_scheduled is not None:
            self.on_scheduled(when)

    def pop_due(self) -> list[str]:
        """Remove and return the keys due now, earliest first."""
        now = self._clock.now()
        keys: list[str] = []
        while self._heap and self._heap[0][0] <= now:
            when, seq, key = heapq.heappop(self._heap)
            if self._due.get(key) == (when, seq):
                del self._due[key]
                keys.append(key)
        return keys

    def due_times(self) -> list[float]:
        """When each queued key is due, in no order (what ``on_scheduled`` reported, for
        a listener that comes late)."""
        return [when for when, _seq in self._due.values()]

    def next_wakeup(self) -> float | None:
        """When the earliest key is due, or None when the queue is empty."""
        while self._heap:
            when, seq, key = self._heap[0]
            if self._due.get(key) == (when, seq):
                return when
            heapq.heappop(self._heap)
        return None


class Expectations:
    """``UIDTrackingControllerExpectations``: creations by count, deletions by pod key."""

    def __init__(self, clock: Clock, *, timeout: float = EXPECTATIONS_TIMEOUT) -> None:
        self._clock = clock
        self._timeout = timeout
        self._adds: dict[str, int] = {}
        self._deletes: dict[str, set[str]] = {}
        self._stamp: dict[str, float] = {}

    def satisfied(self, key: str) -> bool:
        """``SatisfiedExpectations``: nothing outstanding, nothing recorded, or expired."""
        if key not in self._stamp:
            return True
        if self._adds.get(key, 0) <= 0 and not self._deletes.get(key):
            return True
        return self._clock.now() - self._stamp[key] > self._timeout

    def expect_creations(self, key: str, count: int) -> None:
        """``ExpectCreations``: the next ``count`` pod adds belong to ``key``."""
        self._adds[key] = count
        self._deletes.setdefault(key, set())
        self._stamp[key] = self._clock.now()

    def expect_deletions(self, key: str, pod_keys: Iterable[str]) -> None:
        """``ExpectDeletions`` of these pods."""
        self._deletes[key] = set(pod_keys)
        self._adds.setdefault(key, 0)
        self._stamp[key] = self._clock.now()

    def creation_observed(self, key: str) -> None:
        """``CreationObserved``: one expected add arrived (or will never arrive)."""
        if key in self._adds:
            self._adds[key] -= 1

    def deletion_observed(self, key: str, pod_key: str) -> None:
        """``DeletionObserved``: the pod is going away (or its delete failed)."""
        pending = self._deletes.get(key)
        if pending is not None:
            pending.discard(pod_key)

    def delete(self, key: str) -> None:
        """``DeleteExpectations``: the owner is gone."""
        self._adds.pop(key, None)
        self._deletes.pop(key, None)
        self._stamp.pop(key, None)


class Controller(abc.ABC):
    """A reconcile loop over a ``WorkQueue`` of object keys."""

    name: str = "controller"
    """The component name in events (``source.component``)."""

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        recorder: record.EventRecorder | None = None,
    ) -> None:
        self.client = client
        self.clock = clock
        self.rng = rng
        self.recorder = recorder or record.EventRecorder(client, clock=clock, component=self.name)
        self.queue = WorkQueue(clock)

    @abc.abstractmethod
    def reconcile(self, key: str) -> None:
        """Bring the object ``key`` names to its desired state (idempotent)."""

    def event_target(self, key: str) -> ApiObject | None:
        """The object events about ``key`` are recorded on (for ``PermanentError``)."""
        return None

    def run_once(self) -> int:
        """Reconcile every key due now; return how many were processed."""
        keys = self.queue.pop_due()
        for key in keys:
            self.process(key)
        return len(keys)

    def next_wakeup(self) -> float | None:
        """When a queued key is next due."""
        return self.queue.next_wakeup()

    def process(self, key: str) -> None:
        """Run ``reconcile(key)`` under the retry policy."""
        try:
            # A write of ours that waits on an admission webhook raises WritePendingError
            # instead of holding kubeprio serve's loop (client.writepending), and one sync
            # is one unit of work for such writes (``retryable``).
            retryable(functools.partial(self.reconcile, key))
        except TemporaryError as exc:
            self.queue.add_after(key, exc.delay)
        except PermanentError as exc:
            self.queue.forget(key)
            target = self.event_target(key)
            if target is not None:
                self.recorder.event(target, record.EVENT_TYPE_WARNING, "ReconcileFailed", str(exc))
        except WritePendingError as exc:
            self.queue.add_when_answered(key, exc)
        except KubeprioError:
            self.queue.add_rate_limited(key)
        else:
            self.queue.forget(key)
