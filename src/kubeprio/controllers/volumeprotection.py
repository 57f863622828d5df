"""The PVC and PV protection controllers: a claim in use, or a bound volume, stays.

Mirrors upstream v1.32 ``pkg/controller/volume/pvcprotection/pvc_protection_controller.go``
and ``pkg/controller/volume/pvprotection/pv_protection_controller.go``:

* a claim (volume) without a deletion timestamp and without the
  ``kubernetes.io/pvc-protection`` (``kubernetes.io/pv-protection``) finalizer gets it
  (``NeedToAddFinalizer``; the ``StorageObjectInUseProtection`` admission plugin already
  adds it on create);
* a deleting claim keeps its finalizer while a pod uses it: a pod that is scheduled
  (``spec.nodeName`` set) and not terminated (phase neither Succeeded nor Failed) and
  names the claim in a ``persistentVolumeClaim`` volume, or owns it as a generic
  ephemeral volume (``<pod>-<volume>``); once none does, the finalizer is removed and
  the store finishes the deletion;
* a deleting volume keeps its finalizer while its phase is ``Bound``.

Pods are found through an informer index (pods by ``namespace/claim``), never by
scanning all pods; a pod's change or deletion queues the claims it names. Driven by
``next_wakeup``/``run_once`` like every ``controllers.base.Controller``; no threads.
"""

from __future__ import annotations

import random
from typing import Any, Final

from kubeprio.api.core import PHASE_FAILED, PHASE_SUCCEEDED, Pod
from kubeprio.api.model import evolve
from kubeprio.api.persistentvolume import (
    PV_PROTECTION_FINALIZER,
    PVC_PROTECTION_FINALIZER,
    VOLUME_BOUND,
    PersistentVolume,
    PersistentVolumeClaim,
)
from kubeprio.api.storagehelpers import pod_claim_names
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.controllers.base import Controller, object_key, split_key

POD_PVC_INDEX: Final = "pod-pvc"
"""The pod informer index: ``namespace/claim`` for each claim a pod's volumes name."""


def by_pod_claims(pod: Pod) -> list[str]:
    """``POD_PVC_INDEX``'s keys."""
    namespace = pod.metadata.namespace or ""
    return [f"{namespace}/{name}" for name in pod_claim_names(pod)]


def _uses_claim(pod: Pod) -> bool:
    """``podUsesPVC`` for a pod the index found: scheduled and not terminated."""
    phase = pod.status.phase if pod.status else None
    return bool(pod.spec and pod.spec.node_name) and phase not in (PHASE_SUCCEEDED, PHASE_FAILED)


def _without(finalizers: tuple[str, ...] | None, finalizer: str) -> tuple[str, ...] | None:
    kept = tuple(f for f in finalizers or () if f != finalizer)
    return kept or None


class PVCProtectionController(Controller):
    """``pvcprotection.Controller``: keys are ``namespace/name`` of claims."""

    name = "pvc-protection-controller"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        claims: Informer[PersistentVolumeClaim],
        pods: Informer[Pod],
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.claims = claims
        self.pods = pods
        pods.add_index(POD_PVC_INDEX, by_pod_claims)
        claims.add_handler(
            FuncHandler(on_add=self._claim_changed, on_update=lambda _o, c: self._claim_changed(c))
        )
        pods.add_handler(
            FuncHandler(
                on_add=self._pod_changed,
                on_update=self._pod_updated,
                on_delete=self._pod_changed,
            )
        )

    def _claim_changed(self, claim: PersistentVolumeClaim) -> None:
        finalizers = claim.metadata.finalizers or ()
        deleting = claim.metadata.deletion_timestamp is not None
        if (deleting and PVC_PROTECTION_FINALIZER in finalizers) or (
            not deleting and PVC_PROTECTION_FINALIZER not in finalizers
        ):
            self.queue.add(object_key(claim))

    def _pod_changed(self, pod: Pod) -> None:
        for claim_key in by_pod_claims(pod):
            self.queue.add(claim_key)

    def _pod_updated(self, old: Pod, pod: Pod) -> None:
        # A pod that terminates (or is deleted) may release its claims.
        if _uses_claim(old) != _uses_claim(pod) or pod.metadata.deletion_timestamp:
            self._pod_changed(pod)

    def in_use(self, namespace: str, name: str) -> bool:
        """Whether a scheduled, non-terminated pod uses the claim (index lookup)."""
        return any(
            _uses_claim(pod) for pod in self.pods.by_index(POD_PVC_INDEX, f"{namespace}/{name}")
        )

    def reconcile(self, key: str) -> None:
        """``processPVC``."""
        namespace, name = split_key(key)
        claim = self.claims.get(name, namespace)
        if claim is None:
            return
        finalizers = claim.metadata.finalizers or ()
        if claim.metadata.deletion_timestamp is None:
            if PVC_PROTECTION_FINALIZER not in finalizers:
                self._write_finalizers(claim, (*finalizers, PVC_PROTECTION_FINALIZER))
            return
        if PVC_PROTECTION_FINALIZER in finalizers and not self.in_use(namespace, name):
            self._write_finalizers(claim, _without(finalizers, PVC_PROTECTION_FINALIZER))

    def _write_finalizers(self, obj: Any, finalizers: tuple[str, ...] | None) -> None:
        self.client.update(evolve(obj, metadata=evolve(obj.metadata, finalizers=finalizers)))


class PVProtectionController(Controller):
    """``pvprotection.Controller``: keys are volume names."""

    name = "pv-protection-controller"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        volumes: Informer[PersistentVolume],
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.volumes = volumes
        volumes.add_handler(
            FuncHandler(on_add=self._changed, on_update=lambda _o, pv: self._changed(pv))
        )

    def _changed(self, volume: PersistentVolume) -> None:
        finalizers = volume.metadata.finalizers or ()
        deleting = volume.metadata.deletion_timestamp is not None
        if (deleting and PV_PROTECTION_FINALIZER in finalizers) or (
            not deleting and PV_PROTECTION_FINALIZER not in finalizers
        ):
            self.queue.add(volume.metadata.name or "")

    def reconcile(self, key: str) -> None:
        """``processPV``: a deleting volume that is not Bound loses its finalizer."""
        volume = self.volumes.get(key)
        if volume is None:
            return
        finalizers = volume.metadata.finalizers or ()
        if volume.metadata.deletion_timestamp is None:
            if PV_PROTECTION_FINALIZER not in finalizers:
                metadata = evolve(
                    volume.metadata, finalizers=(*finalizers, PV_PROTECTION_FINALIZER)
                )
                self.client.update(evolve(volume, metadata=metadata))
            return
        phase = volume.status.phase if volume.status else None
        if PV_PROTECTION_FINALIZER in finalizers and phase != VOLUME_BOUND:
            metadata = evolve(
                volume.metadata, finalizers=_without(finalizers, PV_PROTECTION_FINALIZER)
            )
            self.client.update(evolve(volume, metadata=metadata))
