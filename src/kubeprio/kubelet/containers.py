"""The containers of a pod the kubelet runs: their events, and the ephemeral ones added later.

* Container events (``pkg/kubelet/kuberuntime/kuberuntime_container.go``): for each
  container started, ``Pulled`` (``Container image "nginx" already present on machine``),
  ``Created`` (``Created container: web``) and ``Started`` (``Started container web``); for
  each app container of a pod being stopped, ``Killing`` (``Stopping container web``). Each
  is recorded on the pod with the container's field path (``spec.containers{web}``,
  ``spec.ephemeralContainers{debugger}``). The kubelet records them only when its config
  asks (``KubeletConfig.container_events``): four events per pod are costly at scale.
* Ephemeral containers (``kubectl debug``, the ``pods/ephemeralcontainers`` subresource):
  the pod worker's ``SyncPod`` starts those of ``spec.ephemeralContainers`` that have no
  status yet, after the regular ones; ``unstarted_ephemeral`` finds them and
  ``ephemeral_running_status`` reports them running (``kubelet.status`` builds the
  statuses). They hold no resources, change no condition, are never restarted, and end,
  killed, with the pod.

Driven by ``kubelet.kubelet``, which decides when and writes the statuses. Pure apart
from the events recorded through the recorder it is handed.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubeprio.api.core import Container, EphemeralContainer, ObjectReference, Pod, PodStatus
from kubeprio.api.model import evolve
from kubeprio.client import record
from kubeprio.kubelet import status


def _ref(pod: Pod, list_name: str, name: str) -> ObjectReference:
    """The pod's reference with the container's field path (``spec.containers{web}``)."""
    return record.object_reference(pod, f"spec.{list_name}{{{name}}}")


def _started(
    recorder: record.EventRecorder,
    pod: Pod,
    list_name: str,
    containers: Iterable[Container | EphemeralContainer],
) -> None:
    """``Pulled``, ``Created``, ``Started`` for each container of ``spec.<list_name>``."""
    normal = record.EVENT_TYPE_NORMAL
    for container in containers:
        name, image = container.name or "", container.image or ""
        ref = _ref(pod, list_name, name)
        recorder.event_for(
            ref, normal, "Pulled", f'Container image "{image}" already present on machine'
        )
        recorder.event_for(ref, normal, "Created", f"Created container: {name}")
        recorder.event_for(ref, normal, "Started", f"Started container {name}")


def started_events(recorder: record.EventRecorder, pod: Pod) -> None:
    """The events of a pod's app containers starting."""
    _started(recorder, pod, "containers", (pod.spec.containers if pod.spec else None) or ())


def killing_events(recorder: record.EventRecorder, pod: Pod) -> None:
    """``Killing`` for each app container of a pod being stopped."""
    for container in (pod.spec.containers if pod.spec else None) or ():
        name = container.name or ""
        ref = _ref(pod, "containers", name)
        recorder.event_for(ref, record.EVENT_TYPE_NORMAL, "Killing", f"Stopping container {name}")


def unstarted_ephemeral(pod: Pod) -> list[EphemeralContainer]:
    """The ephemeral containers that have no status yet, in spec order."""
    spec = pod.spec
    if spec is None or not spec.ephemeral_containers:
        return []
    reported = {
        s.name for s in (pod.status.ephemeral_container_statuses if pod.status else None) or ()
    }
    return [c for c in spec.ephemeral_containers if c.name not in reported]


def ephemeral_running_status(pod: Pod, *, now: str) -> PodStatus:
    """The pod's status with every ephemeral container reported (the new ones running)."""
    return evolve(
        pod.status or PodStatus(),
        ephemeral_container_statuses=status.ephemeral_container_statuses(pod, now=now),
    )


def ephemeral_started_events(
    recorder: record.EventRecorder, pod: Pod, started: Iterable[EphemeralContainer]
) -> None:
    """The events of ephemeral containers starting."""
    _started(recorder, pod, "ephemeralContainers", started)
