"""VolumeBinding: a pod's claims must be bound, bindable or provisionable on the node.

Mirrors ``pkg/scheduler/framework/plugins/volumebinding/volume_binding.go`` (v1.32):

* PreFilter: a pod without claim volumes is SKIPped (after one scan of ``spec.volumes``).
  A missing claim (``persistentvolumeclaim "NAME" not found``), a Lost claim, a claim
  being deleted, or an unbound claim of an Immediate class (``pod has unbound immediate
  PersistentVolumeClaims``) make the pod UnschedulableAndUnresolvable.
* Filter: ``VolumeBinder.find_pod_volumes`` for the node; its reasons (``node(s) had
  volume node affinity conflict``, ``node(s) didn't find available persistent volumes to
  bind``, ``node(s) did not have enough free storage`` when a CSI driver tracking storage
  capacity reports no CSIStorageCapacity with room for a claim to provision, ...) are
  UnschedulableAndUnresolvable: preempting pods cannot help.
* Reserve/Unreserve: assume the chosen bindings in the binder's caches, or revert them.
* PreBind: write the bindings, then wait until the PV controller (and the provisioner)
  bound every claim. Upstream blocks its binding goroutine in ``wait.PollUntilContextTimeout``
  (every second, ``bindTimeoutSeconds``, 600 by default); kubeprio's scheduler is not
  blocked: PreBind returns ``Code.WAIT`` and the scheduler calls it again a second later
  (``Scheduler`` parks the assumed pod meanwhile), until it is bound, fails, or times out
  with ``binding volumes: context deadline exceeded``. A binding write that waits on an
  admission webhook (``kubeprio serve``) raises ``WritePendingError`` with nothing
  reverted (the pod stays assumed, its volumes too); the binding cycle calls PreBind
  again as soon as the answers are in, which sends the write again (the API service
  replays it: one webhook call per review) and goes on with the rest, then polls a
  second later, as upstream's goroutine, blocked in that call, goes on when it returns.
  Only the bindings' progress is polled, as upstream's ``PollUntilContextTimeout``
  does. A refusal is PreBind's error, as upstream.
* Score: off (``VolumeCapacityPriority`` is alpha and disabled in v1.32).

Its registered events (storage class, claim and volume add/update; node add and label
update; CSINode add/update, CSIDriver update, CSIStorageCapacity add/update) and queueing
hints are ``EVENTS``. Driven by ``scheduler.runtime``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Final

from kubeprio.api import errors, storagehelpers
from kubeprio.api.core import Node
from kubeprio.api.persistentvolume import PersistentVolumeClaim
from kubeprio.api.storageclass import StorageClass
from kubeprio.client.answeredretry import retryable
from kubeprio.clock import Clock
from kubeprio.scheduler import framework
from kubeprio.scheduler.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from kubeprio.scheduler.plugins import csievents
from kubeprio.scheduler.plugins.volumebinder import (
    BinderError,
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
    claim_lost_message,
)
from kubeprio.scheduler.snapshot import NodeInfo

NAME: Final = "VolumeBinding"
STATE_KEY: Final = NAME
DEFAULT_BIND_TIMEOUT_SECONDS: Final = 600
"""``VolumeBindingArgs.bindTimeoutSeconds`` default."""
ERR_UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"
DEADLINE_EXCEEDED: Final = "context deadline exceeded"


@dataclasses.dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    """``VolumeBindingArgs`` (kubescheduler.config.k8s.io/v1): how long PreBind waits for
    the claims to be bound. ``shape`` belongs to the alpha VolumeCapacityPriority gate,
    which is off: ``plugin_args`` refuses it."""

    bind_timeout_seconds: int = DEFAULT_BIND_TIMEOUT_SECONDS


@dataclasses.dataclass(slots=True)
class _State:
    """Upstream ``stateData``: shared, not copied, by clones (as upstream's pointer)."""

    claims: PodVolumeClaims | None = None
    by_node: dict[str, PodVolumes] = dataclasses.field(default_factory=dict)
    all_bound: bool = False
    deadline: float | None = None
    """Set once PreBind wrote the bindings: when the wait times out."""

    def clone(self) -> _State:
        return self


def _state(cycle: framework.CycleState) -> _State | None:
    data = cycle.read(STATE_KEY)
    return data if isinstance(data, _State) else None


_NO_STATE: Final = framework.error(f'reading "{STATE_KEY}" from cycleState: not found')


class VolumeBinding:
    """The VolumeBinding plugin (PreFilter, Filter, Reserve, PreBind)."""

    name: Final = NAME

    def __init__(
        self,
        binder: VolumeBinder,
        *,
        clock: Clock,
        node_lookup: Callable[[str], Node | None],
        bind_timeout: float = DEFAULT_BIND_TIMEOUT_SECONDS,
    ) -> None:
        self.binder = binder
        self.clock = clock
        self.node_lookup = node_lookup
        self.bind_timeout = bind_timeout

    # --- PreFilter ----------------------------------------------------------------------

    def _pod_has_claims(self, pod: framework.PodInfo) -> tuple[bool, str | None]:
        """Upstream ``podHasPVCs``: whether the pod uses claims, and the first problem."""
        volumes = storagehelpers.pod_claim_volumes(pod.pod)
        namespace = pod.pod.metadata.namespace or ""
        for name, ephemeral in volumes:
            claim = self.binder.claims.get(name, namespace)
            if claim is None:
                if ephemeral:
                    return True, (
                        "waiting for ephemeral volume controller to create the "
                        f'persistentvolumeclaim "{name}"'
                    )
                return True, f'persistentvolumeclaim "{name}" not found'
            lost = claim_lost_message(claim)
            if lost is not None:
                return True, lost
            if claim.metadata.deletion_timestamp:
                return True, f'persistentvolumeclaim "{name}" is being deleted'
            if ephemeral:
                not_owner = storagehelpers.claim_is_for_pod(pod.pod, claim)
                if not_owner is not None:
                    return True, not_owner
        return bool(volumes), None

    def pre_filter(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[framework.PreFilterResult | None, framework.Status | None]:
        """Upstream ``PreFilter``."""
        has_claims, problem = self._pod_has_claims(pod)
        if problem is not None:
            return None, framework.unresolvable(problem)
        if not has_claims:
            state.write(STATE_KEY, _State(all_bound=True))
            return None, framework.SKIP
        try:
            claims = self.binder.get_pod_volume_claims(pod.pod)
        except BinderError as exc:
            return None, framework.error(str(exc))
        if claims.unbound_immediate:
            return None, framework.unresolvable(ERR_UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, _State(claims=claims))
        return None, None

    def pre_filter_extensions(self) -> framework.PreFilterExtensions | None:
        """None: claims do not depend on other pods."""
        return None

    # --- Filter ---------------------------------------------------------------------------

    def filter(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> framework.Status | None:
        """Upstream ``Filter``: every reason is UnschedulableAndUnresolvable."""
        data = _state(state)
        if data is None:
            return _NO_STATE
        if data.claims is None or node.node is None:
            return None
        try:
            volumes, reasons = self.binder.find_pod_volumes(pod.pod, data.claims, node.node)
        except BinderError as exc:
            return framework.error(str(exc))
        if reasons:
            return framework.unresolvable(*reasons)
        data.by_node[node.name] = volumes
        return None

    # --- Reserve / Unreserve -------------------------------------------------------------

    def reserve(
        self, state: framework.CycleState, pod: framework.PodInfo, node_name: str
    ) -> framework.Status | None:
        """Upstream ``Reserve``: assume the node's decisions.

        No state means PreFilter did not run: the fast path defers it for plain pods,
        which have no claims (``fastpath.is_plain_pod``), so there is nothing to do.
        """
        data = _state(state)
        if data is None:
            return None
        volumes = data.by_node.get(node_name)
        if volumes is None:
            data.all_bound = True  # no claims
            return None
        data.all_bound = self.binder.assume_pod_volumes(pod.pod, node_name, volumes)
        return None

    def unreserve(
        self, state: framework.CycleState, pod: framework.PodInfo, node_name: str
    ) -> None:
        """Upstream ``Unreserve``: revert the assumptions (idempotent)."""
        data = _state(state)
        volumes = data.by_node.get(node_name) if data is not None else None
        if volumes is not None:
            self.binder.revert_assumed_pod_volumes(volumes)

    # --- PreBind ----------------------------------------------------------------------------

    def pre_bind(
        self, state: framework.CycleState, pod: framework.PodInfo, node_name: str
    ) -> framework.Status | None:
        """Upstream ``PreBind`` (``BindPodVolumes``), one poll at a time.

        The first call writes the bindings; every call checks them. ``Code.WAIT`` asks
        the scheduler to call again after its poll interval (upstream: one second).
        """
        data = _state(state)
        if data is None:
            return None  # a plain pod on the fast path (see ``reserve``)
        if data.all_bound:
            return None
        volumes = data.by_node.get(node_name)
        if volumes is None:
            return framework.error(f'no pod volumes found for node "{node_name}"')
        if data.deadline is None:
            # A write waiting on webhook answers raises WritePendingError through the
            # runtime: the binding cycle calls again once they are in.
            try:
                retryable(lambda: self.binder.bind_api_update(volumes))
            except errors.StatusError as exc:
                return framework.error(str(exc))
            data.deadline = self.clock.now() + self.bind_timeout
            return framework.Status(framework.Code.WAIT)
        try:
            done = self.binder.check_bindings(pod.pod, self.node_lookup(node_name), volumes)
        except BinderError as exc:
            return framework.error(f"binding volumes: {exc}")
        if done:
            return None
        if self.clock.now() >= data.deadline:
            return framework.error(f"binding volumes: {DEADLINE_EXCEEDED}")
        return framework.Status(framework.Code.WAIT)


# --- events and queueing hints ---------------------------------------------------------------

_QUEUE: Final = QueueingHint.QUEUE
_SKIP: Final = QueueingHint.QUEUE_SKIP


def after_claim_change(
    pod: framework.PodInfo, old: object | None, new: object | None
) -> QueueingHint:
    """Upstream ``isSchedulableAfterPersistentVolumeClaimChange``: a claim of this pod."""
    if not isinstance(new, PersistentVolumeClaim):
        return _QUEUE
    if new.metadata.namespace != pod.pod.metadata.namespace:
        return _SKIP
    names = {name for name, _ephemeral in storagehelpers.pod_claim_volumes(pod.pod)}
    return _QUEUE if new.metadata.name in names else _SKIP


def after_storage_class_change(
    pod: framework.PodInfo, old: object | None, new: object | None
) -> QueueingHint:
    """Upstream ``isSchedulableAfterStorageClassChange``: a new class, or changed
    ``allowedTopologies`` (the binding mode cannot change)."""
    if not isinstance(old, StorageClass) or not isinstance(new, StorageClass):
        return _QUEUE
    return _QUEUE if old.allowed_topologies != new.allowed_topologies else _SKIP


_A = ActionType
EVENTS: Final[tuple[ClusterEventWithHint, ...]] = (
    ClusterEventWithHint(
        ClusterEvent(EventResource.STORAGE_CLASS, _A.ADD | _A.UPDATE), after_storage_class_change
    ),
    ClusterEventWithHint(
        ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, _A.ADD | _A.UPDATE), after_claim_change
    ),
    ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, _A.ADD | _A.UPDATE)),
    ClusterEventWithHint(ClusterEvent(EventResource.NODE, _A.ADD | _A.UPDATE_NODE_LABEL)),
    ClusterEventWithHint(
        ClusterEvent(EventResource.CSI_NODE, _A.ADD | _A.UPDATE), csievents.after_csi_node_change
    ),
    ClusterEventWithHint(
        ClusterEvent(EventResource.CSI_DRIVER, _A.UPDATE), csievents.after_csi_driver_change
    ),
    ClusterEventWithHint(
        ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, _A.ADD | _A.UPDATE),
        csievents.after_csi_storage_capacity_change,
    ),
)
"""Upstream ``EventsToRegister`` with queueing hints on (the CSI objects' hints are in
``csievents``)."""
