"""The ephemeral volume controller: a claim for each generic ephemeral volume of a pod.

Mirrors upstream v1.32 ``pkg/controller/volume/ephemeral/controller.go``:

* a pod added (not being deleted) with an ``ephemeral`` volume is queued; pod updates are
  ignored (the pod spec is immutable) and so are pod deletions (the garbage collector
  deletes the claims with their pod, through the owner reference);
* a deleted claim queues the pods that name it (the shared ``namespace/claim`` pod index of
  ``controllers.volumeprotection``), so a claim deleted by mistake is made again;
* ``reconcile`` (``syncHandler``/``handleVolume``): for each ephemeral volume the claim
  ``<pod>-<volume>`` (``ephemeral.VolumeClaimName``) is created when the claim informer does
  not hold it: the template's labels, annotations and spec, owned by the pod with
  ``controller`` and ``blockOwnerDeletion`` true. An existing claim the pod does not control
  (``ephemeral.VolumeIsForPod``) is a ``FailedBinding`` Warning on the pod, "ephemeral
  volume scratch: PVC default/p-scratch was not created for pod default/p (pod is not
  owner)", as is a failed create ("ephemeral volume scratch: create PVC p-scratch: ...").

Deviation: upstream retries a pod whose claim belongs to someone else with rate-limited
backoff, a new event at each try; here the event is recorded once and the pod waits for
that claim's deletion (the only change that can resolve it), so an idle simulation ends.
A failed create is retried with backoff, as upstream. Driven by ``next_wakeup``/``run_once``
like every ``controllers.base.Controller``; no threads.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, Final

from kubeprio.api.core import Pod
from kubeprio.api.meta import ObjectMeta, OwnerReference
from kubeprio.api.persistentvolume import PersistentVolumeClaim, PersistentVolumeClaimSpec
from kubeprio.api.serialization import from_dict
from kubeprio.api.storagehelpers import (
    claim_is_for_pod,
    ephemeral_claim_name,
    pod_ephemeral_volumes,
)
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.controllers.base import Controller, object_key, split_key
from kubeprio.controllers.volumeprotection import POD_PVC_INDEX, by_pod_claims
from kubeprio.errors import ControllerError, KubeprioError

FAILED_BINDING: Final = "FailedBinding"
"""``events.FailedBinding``: the reason of the controller's Warning events."""


def _str_map(value: object) -> dict[str, str] | None:
    if not isinstance(value, Mapping) or not value:
        return None
    return {str(k): str(v) for k, v in value.items()}


def claim_for(pod: Pod, volume_name: str, template: Mapping[str, Any]) -> PersistentVolumeClaim:
    """The claim ``handleVolume`` creates for one ephemeral volume of ``pod``."""
    meta = template.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    spec = from_dict(PersistentVolumeClaimSpec, dict(template.get("spec") or {}))
    return PersistentVolumeClaim(
        metadata=ObjectMeta(
            name=ephemeral_claim_name(pod, volume_name),
            namespace=pod.metadata.namespace,
            labels=_str_map(meta.get("labels")),
            annotations=_str_map(meta.get("annotations")),
            owner_references=(
                OwnerReference(
                    api_version="v1",
                    kind="Pod",
                    name=pod.metadata.name,
                    uid=pod.metadata.uid,
                    controller=True,
                    block_owner_deletion=True,
                ),
            ),
        ),
        spec=spec,
    )


class EphemeralVolumeController(Controller):
    """``ephemeralController``: keys are ``namespace/name`` of pods."""

    name = "ephemeral_volume"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        pods: Informer[Pod],
        claims: Informer[PersistentVolumeClaim],
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.pods = pods
        self.claims = claims
        pods.add_index(POD_PVC_INDEX, by_pod_claims)
        pods.add_handler(FuncHandler(on_add=self._enqueue_pod))
        claims.add_handler(FuncHandler(on_delete=self._claim_deleted))

    def _enqueue_pod(self, pod: Pod) -> None:
        """``enqueuePod``: a pod not being deleted that has an ephemeral volume."""
        if pod.metadata.deletion_timestamp is None and pod_ephemeral_volumes(pod):
            self.queue.add(object_key(pod))

    def _claim_deleted(self, claim: PersistentVolumeClaim) -> None:
        """``onPVCDelete``: the pods naming the claim, through the shared index."""
        key = f"{claim.metadata.namespace or ''}/{claim.metadata.name or ''}"
        for pod in self.pods.by_index(POD_PVC_INDEX, key):
            self._enqueue_pod(pod)

    def event_target(self, key: str) -> Pod | None:
        namespace, name = split_key(key)
        return self.pods.get(name, namespace)

    def reconcile(self, key: str) -> None:
        """``syncHandler``: every ephemeral volume of the pod, stopping at the first error."""
        namespace, name = split_key(key)
        pod = self.pods.get(name, namespace)
        if pod is None or pod.metadata.deletion_timestamp is not None:
            return
        for volume_name, template in pod_ephemeral_volumes(pod):
            if not self._handle_volume(pod, volume_name, template):
                return

    def _handle_volume(self, pod: Pod, volume_name: str, template: Mapping[str, Any]) -> bool:
        """``handleVolume``: whether the volume's claim is there (or was just created)."""
        claim_name = ephemeral_claim_name(pod, volume_name)
        existing = self.claims.get(claim_name, pod.metadata.namespace)
        if existing is not None:
            problem = claim_is_for_pod(pod, existing)
            if problem is None:
                return True
            self._failed(pod, volume_name, problem)
            return False  # waits for the claim's deletion (see the module docstring)
        try:
            claim = claim_for(pod, volume_name, template)
            self.client.create(claim)
        except KubeprioError as exc:  # an API error, or a template that does not decode
            message = f"create PVC {claim_name}: {exc}"
            self._failed(pod, volume_name, message)
            raise ControllerError(
                f"pod {object_key(pod)}, ephemeral volume {volume_name}: {message}"
            ) from exc
        return True

    def _failed(self, pod: Pod, volume_name: str, message: str) -> None:
        self.recorder.event(
            pod,
            record.EVENT_TYPE_WARNING,
            FAILED_BINDING,
            f"ephemeral volume {volume_name}: {message}",
        )
