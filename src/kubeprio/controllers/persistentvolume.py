"""The PersistentVolume controller: binds claims to volumes, asks for provisioning, reclaims.

Mirrors ``pkg/controller/volume/persistentvolume/pv_controller.go`` (v1.32):
``syncUnboundClaim`` (best match: pre-bound volume, else the smallest Available volume
of the claim's class, access modes and volume mode that fits — node affinity ignored;
WaitForFirstConsumer claims are left to the scheduler, ``WaitForFirstConsumer`` event;
dynamic provisioning by an external provisioner: the ``volume.kubernetes.io/
storage-provisioner`` annotations and the ``ExternalProvisioning`` event; no class:
``FailedBinding``), ``syncBoundClaim`` (Lost, Misbound), ``syncVolume`` (phases
Available/Bound/Released, unbinding) and ``reclaimVolume`` (Retain keeps the volume
Released; Delete is left to the external provisioner that created it, else the volume
Failed as no in-tree deleter exists here; Recycle: Failed, no recycler).

Bindings write ``pv.kubernetes.io/bind-completed`` and ``pv.kubernetes.io/bound-by-controller``.
Upstream also resyncs every claim and volume every 15 s; here a volume that becomes
Available requeues the unbound claims of its class instead (the resync's one effect that
matters), so an idle control plane stays idle. Not modelled: ``WaitForPodScheduled``
events, in-tree provisioner plugins, CSI migration. Component ``persistentvolume-controller``.
Keys: ``claim:<namespace>/<name>`` and ``volume:<name>``. Only through the ``Client``.
"""

from __future__ import annotations

import random
from typing import Final

from kubeprio.api import errors, storagehelpers
from kubeprio.api.meta import ApiObject
from kubeprio.api.model import evolve
from kubeprio.api.persistentvolume import (
    CLAIM_BOUND,
    CLAIM_LOST,
    CLAIM_PENDING,
    RECLAIM_DELETE,
    RECLAIM_RECYCLE,
    RECLAIM_RETAIN,
    VOLUME_AVAILABLE,
    VOLUME_BOUND,
    VOLUME_FAILED,
    VOLUME_RELEASED,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimStatus,
    PersistentVolumeStatus,
    claim_class,
    claim_phase,
    volume_class,
    volume_phase,
)
from kubeprio.api.storageclass import (
    BINDING_WAIT_FOR_FIRST_CONSUMER,
    StorageClass,
    default_class,
)
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.controllers.base import Controller, split_key

COMPONENT: Final = "persistentvolume-controller"
CLAIM_PREFIX: Final = "claim:"
VOLUME_PREFIX: Final = "volume:"
CLASS_INDEX: Final = "storage-class"


def _claim_key(claim: PersistentVolumeClaim) -> str:
    return f"{claim.metadata.namespace or ''}/{claim.metadata.name or ''}"


def external_provisioning_message(provisioner: str) -> str:
    """The ``ExternalProvisioning`` event text of ``provisionClaimOperationExternal``."""
    return (
        f"Waiting for a volume to be created either by the external provisioner '{provisioner}' "
        "or manually by the system administrator. If volume creation is delayed, please verify "
        "that the provisioner is running and correctly registered."
    )


class PersistentVolumeController(Controller):
    """Upstream ``PersistentVolumeController`` (binder part)."""

    name = COMPONENT

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        claims: Informer[PersistentVolumeClaim],
        volumes: Informer[PersistentVolume],
        classes: Informer[StorageClass],
    ) -> None:
        super().__init__(client, clock=clock, rng=rng)
        self.claims = claims
        self.volumes = volumes
        self.classes = classes
        claims.add_index(CLASS_INDEX, lambda c: [claim_class(c)])
        claims.add_handler(
            FuncHandler(self._enqueue_claim, lambda _o, n: self._enqueue_claim(n), self._claim_gone)
        )
        volumes.add_handler(
            FuncHandler(
                self._enqueue_volume, lambda _o, n: self._enqueue_volume(n), self._volume_gone
            )
        )

    # --- event handlers -----------------------------------------------------------------

    def _enqueue_claim(self, claim: PersistentVolumeClaim) -> None:
        self.queue.add(CLAIM_PREFIX + _claim_key(claim))

    def _claim_gone(self, claim: PersistentVolumeClaim) -> None:
        # deleteClaim: the bound volume is synced (it becomes Released).
        volume_name = claim.spec.volume_name if claim.spec else None
        if volume_name:
            self.queue.add(VOLUME_PREFIX + volume_name)

    def _enqueue_volume(self, volume: PersistentVolume) -> None:
        self.queue.add(VOLUME_PREFIX + (volume.metadata.name or ""))

    def _volume_gone(self, volume: PersistentVolume) -> None:
        ref = volume.spec.claim_ref if volume.spec else None
        if ref is not None:
            self.queue.add(f"{CLAIM_PREFIX}{ref.namespace or ''}/{ref.name or ''}")

    def event_target(self, key: str) -> ApiObject | None:
        """The claim or volume a key names."""
        if key.startswith(CLAIM_PREFIX):
            namespace, name = split_key(key.removeprefix(CLAIM_PREFIX))
            return self.claims.get(name, namespace)
        return self.volumes.get(key.removeprefix(VOLUME_PREFIX))

    def _event(self, obj: ApiObject, event_type: str, reason: str, message: str) -> None:
        self.recorder.event(obj, event_type, reason, message)

    def reconcile(self, key: str) -> None:
        """``syncClaim`` or ``syncVolume``."""
        if key.startswith(CLAIM_PREFIX):
            namespace, name = split_key(key.removeprefix(CLAIM_PREFIX))
            claim = self.claims.get(name, namespace)
            if claim is not None:
                self.sync_claim(claim)
            return
        volume = self.volumes.get(key.removeprefix(VOLUME_PREFIX))
        if volume is not None:
            self.sync_volume(volume)

    # --- claims -------------------------------------------------------------------------

    def sync_claim(self, claim: PersistentVolumeClaim) -> None:
        """Upstream ``syncClaim``."""
        if storagehelpers.ANN_BIND_COMPLETED in storagehelpers.annotations_of(claim.metadata):
            self._sync_bound_claim(claim)
        else:
            self._sync_unbound_claim(claim)

    def _is_delay_binding(self, claim: PersistentVolumeClaim) -> bool:
        name = claim_class(claim)
        storage_class = self.classes.get(name) if name else None
        return (
            storage_class is not None
            and storage_class.volume_binding_mode == BINDING_WAIT_FOR_FIRST_CONSUMER
        )

    def find_best_match(
        self, claim: PersistentVolumeClaim, delay_binding: bool
    ) -> PersistentVolume | None:
        """``persistentVolumeOrderedIndex.findBestMatchForClaim``: volumes grouped by
        access-mode set, the smallest sets containing the claim's modes tried first."""
        wanted = set((claim.spec.access_modes if claim.spec else None) or ())
        groups: dict[frozenset[str], list[PersistentVolume]] = {}
        for volume in self.volumes.list():
            modes = frozenset((volume.spec.access_modes if volume.spec else None) or ())
            if wanted <= modes:
                groups.setdefault(modes, []).append(volume)
        for modes in sorted(groups, key=lambda m: (len(m), sorted(m))):
            found = storagehelpers.find_matching_volume(
                claim, groups[modes], delay_binding=delay_binding
            )
            if found is not None:
                return found
        return None

    def _sync_unbound_claim(self, claim: PersistentVolumeClaim) -> None:
        volume_name = claim.spec.volume_name if claim.spec else None
        if not volume_name:
            delay = self._is_delay_binding(claim)
            volume = self.find_best_match(claim, delay)
            if volume is not None:
                self._bind(volume, claim)
                return
            if self._assign_default_class(claim):
                return
            annotations = storagehelpers.annotations_of(claim.metadata)
            if delay and storagehelpers.ANN_SELECTED_NODE not in annotations:
                self._event(
                    claim,
                    record.EVENT_TYPE_NORMAL,
                    "WaitForFirstConsumer",
                    "waiting for first consumer to be created before binding",
                )
            elif claim_class(claim):
                self._provision_claim(claim)
                return
            else:
                self._event(
                    claim,
                    record.EVENT_TYPE_NORMAL,
                    "FailedBinding",
                    "no persistent volumes available for this claim and no storage class is set",
                )
            self._update_claim_status(claim, CLAIM_PENDING, None)
            return
        volume = self.volumes.get(volume_name)
        if volume is None:
            self._update_claim_status(claim, CLAIM_PENDING, None)
            return
        ref = volume.spec.claim_ref if volume.spec else None
        if ref is None:
            mismatch = _volume_satisfies_claim(volume, claim)
            if mismatch:
                self._event(
                    claim,
                    record.EVENT_TYPE_WARNING,
                    "VolumeMismatch",
                    f'Cannot bind to requested volume "{volume_name}": {mismatch}',
                )
                self._update_claim_status(claim, CLAIM_PENDING, None)
                return
            self._bind(volume, claim)
        elif storagehelpers.is_volume_bound_to_claim(volume, claim):
            self._bind(volume, claim)
        else:
            self._event(
                claim,
                record.EVENT_TYPE_WARNING,
                "FailedBinding",
                f'volume "{volume_name}" already bound to a different claim.',
            )
            if storagehelpers.ANN_BOUND_BY_CONTROLLER not in storagehelpers.annotations_of(
                claim.metadata
            ):
                self._update_claim_status(claim, CLAIM_PENDING, None)

    def _assign_default_class(self, claim: PersistentVolumeClaim) -> bool:
        """``assignDefaultStorageClass``: a claim with no class at all (not "") gets the
        default class retroactively (the newest, if several)."""
        if claim.spec is not None and claim.spec.storage_class_name is not None:
            return False
        if storagehelpers.annotations_of(claim.metadata).get(
            "volume.beta.kubernetes.io/storage-class"
        ):
            return False
        newest = default_class(self.classes.list())
        if newest is None:
            return False
        spec = evolve(
            claim.spec or PersistentVolumeClaimSpec(), storage_class_name=newest.metadata.name
        )
        self.client.update(evolve(claim, spec=spec))
        return True

    def _provision_claim(self, claim: PersistentVolumeClaim) -> None:
        """``provisionClaim`` for external provisioners (no in-tree plugins here)."""
        name = claim_class(claim)
        storage_class = self.classes.get(name)
        if storage_class is None:
            self._event(
                claim,
                record.EVENT_TYPE_WARNING,
                "ProvisioningFailed",
                f'storageclass.storage.k8s.io "{name}" not found',
            )
            return
        provisioner = storage_class.provisioner or ""
        if provisioner.startswith("kubernetes.io/"):
            self._event(
                claim,
                record.EVENT_TYPE_WARNING,
                "ProvisioningFailed",
                f"no provisionable volume plugin matched name: {provisioner}",
            )
            return
        # setClaimProvisioner: both annotations, written once.
        annotations = storagehelpers.annotations_of(claim.metadata)
        if (
            annotations.get(storagehelpers.ANN_STORAGE_PROVISIONER) != provisioner
            or annotations.get(storagehelpers.ANN_BETA_STORAGE_PROVISIONER) != provisioner
        ):
            updated = {
                **annotations,
                storagehelpers.ANN_STORAGE_PROVISIONER: provisioner,
                storagehelpers.ANN_BETA_STORAGE_PROVISIONER: provisioner,
            }
            claim = self.client.update(
                evolve(claim, metadata=evolve(claim.metadata, annotations=updated))
            )
        self._event(
            claim,
            record.EVENT_TYPE_NORMAL,
            "ExternalProvisioning",
            external_provisioning_message(provisioner),
        )

    def _sync_bound_claim(self, claim: PersistentVolumeClaim) -> None:
        volume_name = claim.spec.volume_name if claim.spec else None
        if not volume_name:
            self._claim_lost(
                claim,
                "ClaimLost",
                "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!",
            )
            return
        volume = self.volumes.get(volume_name)
        if volume is None:
            self._claim_lost(
                claim,
                "ClaimLost",
                "Bound claim has lost its PersistentVolume. Data on the volume is lost!",
            )
            return
        ref = volume.spec.claim_ref if volume.spec else None
        if ref is None or ref.uid == claim.metadata.uid:
            self._bind(volume, claim)
        else:
            self._claim_lost(
                claim,
                "ClaimMisbound",
                "Two claims are bound to the same volume, this one is bound incorrectly",
            )

    def _claim_lost(self, claim: PersistentVolumeClaim, reason: str, message: str) -> None:
        """``updateClaimStatusWithEvent`` to Lost: the event only on the change."""
        if claim_phase(claim) == CLAIM_LOST:
            return
        claim = self._update_claim_status(claim, CLAIM_LOST, None)
        self._event(claim, record.EVENT_TYPE_WARNING, reason, message)

    def _update_claim_status(
        self, claim: PersistentVolumeClaim, phase: str, volume: PersistentVolume | None
    ) -> PersistentVolumeClaim:
        """``updateClaimStatus``: phase, and access modes/capacity from the volume."""
        status = claim.status or PersistentVolumeClaimStatus()
        if volume is None:
            wanted = evolve(status, phase=phase, access_modes=None, capacity=None)
        else:
            spec = volume.spec
            wanted = evolve(
                status,
                phase=phase,
                access_modes=spec.access_modes if spec else None,
                capacity=spec.capacity if spec else None,
            )
        if wanted == claim.status:
            return claim
        return self.client.update_status(evolve(claim, status=wanted))

    # --- binding ------------------------------------------------------------------------

    def _bind(self, volume: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        """Upstream ``bind``: volume -> claim, volume Bound, claim -> volume, claim Bound."""
        new_volume, dirty = storagehelpers.bind_volume_to_claim(volume, claim)
        if dirty:
            volume = self.client.update(new_volume)
        volume = self._update_volume_phase(volume, VOLUME_BOUND, "")
        claim = self._bind_claim_to_volume(claim, volume)
        self._update_claim_status(claim, CLAIM_BOUND, volume)

    def _bind_claim_to_volume(
        self, claim: PersistentVolumeClaim, volume: PersistentVolume
    ) -> PersistentVolumeClaim:
        """``bindClaimToVolume``: ``volumeName`` (bound-by-controller when we chose it)
        and bind-completed."""
        annotations = dict(storagehelpers.annotations_of(claim.metadata))
        spec = claim.spec or PersistentVolumeClaimSpec()
        name = volume.metadata.name or ""
        if spec.volume_name != name:
            spec = evolve(spec, volume_name=name)
            annotations.setdefault(storagehelpers.ANN_BOUND_BY_CONTROLLER, "yes")
        annotations.setdefault(storagehelpers.ANN_BIND_COMPLETED, "yes")
        if spec is claim.spec and annotations == dict(claim.metadata.annotations or {}):
            return claim
        metadata = evolve(claim.metadata, annotations=annotations)
        return self.client.update(evolve(claim, metadata=metadata, spec=spec))

    def _update_volume_phase(
        self, volume: PersistentVolume, phase: str, message: str
    ) -> PersistentVolume:
        """``updateVolumePhase``."""
        status = volume.status or PersistentVolumeStatus()
        if status.phase == phase and (status.message or "") == message:
            return volume
        new_status = evolve(status, phase=phase, message=message or None)
        return self.client.update_status(evolve(volume, status=new_status))

    # --- volumes ------------------------------------------------------------------------

    def sync_volume(self, volume: PersistentVolume) -> None:
        """Upstream ``syncVolume``."""
        ref = volume.spec.claim_ref if volume.spec else None
        if ref is None or not ref.uid:
            if volume_phase(volume) != VOLUME_AVAILABLE:
                self._update_volume_phase(volume, VOLUME_AVAILABLE, "")
                # Our stand-in for the 15 s resync: pending claims may match it now.
                for pending in self.claims.by_index(CLASS_INDEX, volume_class(volume)):
                    if (
                        not (pending.spec and pending.spec.volume_name)
                        and claim_phase(pending) != CLAIM_BOUND
                    ):
                        self._enqueue_claim(pending)
            return
        claim: PersistentVolumeClaim | None = self.claims.get(ref.name or "", ref.namespace)
        if claim is None and volume_phase(volume) not in (VOLUME_RELEASED, VOLUME_FAILED):
            try:
                claim = self.client.get(PersistentVolumeClaim, ref.name or "", ref.namespace)
            except errors.NotFoundError:
                claim = None
        if claim is not None and claim.metadata.uid != ref.uid:
            claim = None
        if claim is None:
            if volume_phase(volume) not in (VOLUME_RELEASED, VOLUME_FAILED):
                volume = self._update_volume_phase(volume, VOLUME_RELEASED, "")
            self._reclaim(volume)
            return
        claim_volume = claim.spec.volume_name if claim.spec else None
        if not claim_volume:
            self._enqueue_claim(claim)
        elif claim_volume == volume.metadata.name:
            self._update_volume_phase(volume, VOLUME_BOUND, "")
        else:
            annotations = storagehelpers.annotations_of(volume.metadata)
            policy = volume.spec.persistent_volume_reclaim_policy if volume.spec else None
            if (
                storagehelpers.ANN_DYNAMICALLY_PROVISIONED in annotations
                and policy == RECLAIM_DELETE
            ):
                if volume_phase(volume) not in (VOLUME_RELEASED, VOLUME_FAILED):
                    volume = self._update_volume_phase(volume, VOLUME_RELEASED, "")
                self._reclaim(volume)
            else:
                self._unbind_volume(volume)

    def _unbind_volume(self, volume: PersistentVolume) -> None:
        """``unbindVolume``: drop a controller-made claimRef; keep a user's pre-binding
        without its UID."""
        annotations = dict(storagehelpers.annotations_of(volume.metadata))
        spec = volume.spec
        assert spec is not None
        assert spec.claim_ref is not None
        if storagehelpers.ANN_BOUND_BY_CONTROLLER in annotations:
            spec = evolve(spec, claim_ref=None)
            del annotations[storagehelpers.ANN_BOUND_BY_CONTROLLER]
        else:
            spec = evolve(spec, claim_ref=evolve(spec.claim_ref, uid=None))
        metadata = evolve(volume.metadata, annotations=annotations or None)
        volume = self.client.update(evolve(volume, metadata=metadata, spec=spec))
        self._update_volume_phase(volume, VOLUME_AVAILABLE, "")

    def _reclaim(self, volume: PersistentVolume) -> None:
        """Upstream ``reclaimVolume``."""
        policy = volume.spec.persistent_volume_reclaim_policy if volume.spec else None
        if policy == RECLAIM_RETAIN:
            return
        if policy == RECLAIM_RECYCLE:
            self._fail(volume, "VolumeFailedRecycle", "No recycler plugin found for the volume!")
            return
        if policy == RECLAIM_DELETE:
            provisioner = storagehelpers.annotations_of(volume.metadata).get(
                storagehelpers.ANN_DYNAMICALLY_PROVISIONED, ""
            )
            if provisioner and not provisioner.startswith("kubernetes.io/"):
                return  # an external deleter (the provisioner) removes it
            self._fail(
                volume,
                "VolumeFailedDelete",
                f'error getting deleter volume plugin for volume "{volume.metadata.name}": '
                "no deletable volume plugin matched",
            )
            return
        self._fail(
            volume,
            "VolumeUnknownReclaimPolicy",
            "Volume has unrecognized PersistentVolumeReclaimPolicy",
        )

    def _fail(self, volume: PersistentVolume, reason: str, message: str) -> None:
        """``updateVolumePhaseWithEvent`` to Failed: the event only on the change."""
        if volume_phase(volume) == VOLUME_FAILED:
            return
        volume = self._update_volume_phase(volume, VOLUME_FAILED, message)
        self._event(volume, record.EVENT_TYPE_WARNING, reason, message)


def _volume_satisfies_claim(volume: PersistentVolume, claim: PersistentVolumeClaim) -> str:
    """``checkVolumeSatisfyClaim``: "" or why the requested volume does not fit."""
    if volume.metadata.deletion_timestamp:
        return f'the volume is marked for deletion "{volume.metadata.name}"'
    if storagehelpers.volume_capacity(volume) < storagehelpers.claim_request(claim):
        return "requested PV is too small"
    if volume_class(volume) != claim_class(claim):
        return "storageClassName does not match"
    if storagehelpers.volume_mode_mismatch(claim, volume):
        return "incompatible volumeMode"
    if not storagehelpers.check_access_modes(claim, volume):
        return "incompatible accessMode"
    return ""
