"""Pod and ownership helpers the workload controllers share.

Mirrors ``pkg/api/v1/pod/util.go`` (``IsPodReady``, ``IsPodAvailable``),
``pkg/controller/controller_utils.go`` (``IsPodActive``, ``FilterActivePods``,
``CountTerminatingPods``, ``GetPodFromTemplate``) and
``pkg/controller/controller_ref_manager.go`` (``ClaimPods``/``ClaimReplicaSets``: adopt
matching orphans, release owned objects that stopped matching, via a strategic merge
patch of ``ownerReferences`` carrying the object's UID as a precondition).

Pure helpers plus two client calls (adopt, release); no clock of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, TypeVar

from kubeprio.api import errors, kinds, selectors
from kubeprio.api.core import PHASE_FAILED, PHASE_SUCCEEDED, Pod, PodTemplateSpec
from kubeprio.api.meta import ApiObject, LabelSelector, ObjectMeta, OwnerReference
from kubeprio.api.model import INT32_MAX, INT32_MIN, evolve
from kubeprio.api.patch import PatchType
from kubeprio.client.protocol import Client
from kubeprio.clock import parse_rfc3339

T = TypeVar("T", bound=ApiObject)

POD_DELETION_COST: Final = "controller.kubernetes.io/pod-deletion-cost"
MAX_POD_CREATE_DELETE_PER_SYNC: Final = 500
SLOW_START_INITIAL_BATCH_SIZE: Final = 1


def phase(pod: Pod) -> str:
    """``status.phase`` ('' when unset)."""
    return (pod.status.phase if pod.status else None) or ""


def is_pod_active(pod: Pod) -> bool:
    """``IsPodActive``: not Succeeded, not Failed, not being deleted."""
    return phase(pod) not in (PHASE_SUCCEEDED, PHASE_FAILED) and not pod.metadata.deletion_timestamp


def is_pod_terminating(pod: Pod) -> bool:
    """Counted by ``CountTerminatingPods``: being deleted and not yet terminal."""
    return bool(pod.metadata.deletion_timestamp) and phase(pod) not in (
        PHASE_SUCCEEDED,
        PHASE_FAILED,
    )


def ready_condition_time(pod: Pod) -> str | None:
    """The ``lastTransitionTime`` of a ``Ready=True`` condition, or None if not ready."""
    for condition in (pod.status.conditions if pod.status else None) or ():
        if condition.type == "Ready":
            return (condition.last_transition_time or "") if condition.status == "True" else None
    return None


def is_pod_ready(pod: Pod) -> bool:
    """``IsPodReady``: condition ``Ready`` is ``True``."""
    return ready_condition_time(pod) is not None


def is_pod_available(pod: Pod, min_ready_seconds: int, now: float) -> bool:
    """``IsPodAvailable``: ready, and for ``min_ready_seconds`` when that is set."""
    since = ready_condition_time(pod)
    if since is None:
        return False
    if not min_ready_seconds:
        return True
    if not since:
        return False
    # Upstream: ready time + minReadySeconds strictly before now. Controllers requeue for
    # exactly that instant; real time has moved on by then, virtual time has not.
    return parse_rfc3339(since) + min_ready_seconds <= now


def controller_ref(obj: ApiObject) -> OwnerReference | None:
    """``GetControllerOf``."""
    return obj.metadata.controller_ref()


def new_controller_ref(owner: ApiObject) -> OwnerReference:
    """``NewControllerRef``: controller and blockOwnerDeletion true."""
    info = kinds.for_object(owner)
    return OwnerReference(
        api_version=info.api_version,
        kind=info.kind,
        name=owner.metadata.name,
        uid=owner.metadata.uid,
        controller=True,
        block_owner_deletion=True,
    )


def selector_of(selector: LabelSelector | None) -> selectors.Selector:
    """``LabelSelectorAsSelector`` (nil matches nothing); raises ``SelectorError``."""
    return selectors.label_selector_as_selector(selector)


def selecting(
    candidates: Iterable[T],
    labels: Mapping[str, str] | None,
    selector: Callable[[T], LabelSelector | None],
) -> list[T]:
    """The candidates whose label selector matches ``labels``: the body upstream repeats in
    ``GetPodReplicaSets``, ``GetPodDaemonSets``/``GetHistoryDaemonSets``,
    ``getPodStatefulSets``, ``GetPodPodDisruptionBudgets`` and ``addReplicaSet``. An
    unlabelled object is selected by none; a candidate whose selector does not parse (or is
    nil) selects nothing."""
    if not labels:
        return []
    found = []
    for candidate in candidates:
        try:
            parsed = selector_of(selector(candidate))
        except selectors.SelectorError:
            continue
        if parsed.matches(labels):
            found.append(candidate)
    return found


def pods_prefix(controller_name: str) -> str:
    """``getPodsPrefix``: ``<name>-`` for ``generateName``."""
    return f"{controller_name}-"


def pod_from_template(
    template: PodTemplateSpec | None,
    owner: ApiObject,
    *,
    generate_name: str,
    extra_labels: dict[str, str] | None = None,
    extra_finalizers: Sequence[str] = (),
) -> Pod:
    """``GetPodFromTemplate``: labels, annotations and finalizers from the template."""
    meta = (template.metadata if template else None) or ObjectMeta()
    labels = dict(meta.labels or {})
    labels.update(extra_labels or {})
    finalizers = list(meta.finalizers or ())
    finalizers.extend(f for f in extra_finalizers if f not in finalizers)
    return Pod(
        metadata=ObjectMeta(
            generate_name=generate_name,
            namespace=owner.metadata.namespace,
            labels=labels or None,
            annotations=dict(meta.annotations) if meta.annotations else None,
            finalizers=tuple(finalizers) or None,
            owner_references=(new_controller_ref(owner),),
        ),
        spec=template.spec if template else None,
    )


def deletion_cost(pod: Pod) -> int:
    """``GetDeletionCostFromPodAnnotations`` (0 when absent or invalid)."""
    text = pod.metadata.annotation(POD_DELETION_COST)
    if text is None:
        return 0
    try:
        value = int(text.strip())
    except ValueError:
        return 0
    return value if INT32_MIN <= value <= INT32_MAX else 0


def adopt(client: Client, obj: T, owner: ApiObject) -> T:
    """``AdoptPod``: add the owner as controller (precondition: the object's UID)."""
    ref = new_controller_ref(owner)
    patch = {
        "metadata": {
            "ownerReferences": [
                {
                    "apiVersion": ref.api_version,
                    "kind": ref.kind,
                    "name": ref.name,
                    "uid": ref.uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "uid": obj.metadata.uid,
        }
    }
    return client.patch(
        type(obj),
        obj.metadata.name or "",
        patch,
        namespace=obj.metadata.namespace,
        patch_type=PatchType.STRATEGIC_MERGE_PATCH,
    )


def release(client: Client, obj: T, owner: ApiObject) -> T | None:
    """``ReleasePod``: drop the owner reference (NotFound means it is already gone)."""
    patch = {
        "metadata": {
            "ownerReferences": [{"$patch": "delete", "uid": owner.metadata.uid}],
            "uid": obj.metadata.uid,
        }
    }
    try:
        return client.patch(
            type(obj),
            obj.metadata.name or "",
            patch,
            namespace=obj.metadata.namespace,
            patch_type=PatchType.STRATEGIC_MERGE_PATCH,
        )
    except (errors.NotFoundError, errors.InvalidError):
        return None


def claim(
    client: Client,
    owner: ApiObject,
    selector: selectors.Selector,
    candidates: Sequence[T],
    *,
    can_adopt: Callable[[], bool] | None = None,
) -> list[T]:
    """``ClaimObjects``: the objects ``owner`` controls after adopting and releasing."""
    uid = owner.metadata.uid
    claimed: list[T] = []
    for obj in candidates:
        ref = controller_ref(obj)
        labels = obj.metadata.labels or {}
        if ref is not None:
            if ref.uid != uid:
                continue
            if selector.matches(labels):
                claimed.append(obj)
            elif not owner.metadata.deletion_timestamp:
                release(client, obj, owner)
            continue
        if (
            owner.metadata.deletion_timestamp
            or obj.metadata.deletion_timestamp
            or not selector.matches(labels)
            or (can_adopt is not None and not can_adopt())
        ):
            continue
        try:
            claimed.append(adopt(client, obj, owner))
        except (errors.NotFoundError, errors.ConflictError, errors.InvalidError):
            continue
    return claimed


def replace_status(obj: T, status: object) -> T:
    """``obj`` with ``status`` (for ``update_status``)."""
    return evolve(obj, status=status)
