"""kubeprio's simulated external provisioner: creates and deletes volumes for claims.

No storage exists behind kubeprio, so, as KWOK fakes nodes, this controller fakes the
external provisioner (``sigs.k8s.io/sig-storage-lib-external-provisioner``'s
controller) for the classes whose ``provisioner`` it owns: ``kubeprio.io/simulated``,
``rancher.io/local-path`` (k3s's default class, so k3s-style manifests behave) and
``csi.kubeprio.io`` (a valid CSIDriver name, so a manifest can declare a CSIDriver with
``storageCapacity: true`` and CSIStorageCapacity objects for it; volumes as
``kubeprio.io/simulated``'s).

* A claim the PV controller annotated ``volume.kubernetes.io/storage-provisioner: <ours>``
  and not bound yet is provisioned — Immediate classes at once, WaitForFirstConsumer
  ones once the scheduler annotated ``volume.kubernetes.io/selected-node`` — as upstream's
  ``shouldProvision``. The volume is ``pvc-<claim uid>``, pre-bound to the claim
  (``claimRef`` with its UID), with the request as capacity, the claim's access and
  volume modes, the class's reclaim policy (Delete by default) and mount options,
  ``pv.kubernetes.io/provisioned-by``; a ``hostPath`` source; for ``rancher.io/local-path``
  node affinity to the selected node's ``kubernetes.io/hostname``. Events on the claim:
  ``Provisioning`` then ``ProvisioningSucceeded`` (the library's texts).
* A Released volume it provisioned with reclaim policy Delete is deleted (the library's
  ``shouldDelete``/``deleteVolumeOperation``).

The PV controller then binds the claim (``controllers.persistentvolume``). Keys:
``claim:<namespace>/<name>`` and ``volume:<name>``. Only through the ``Client``.
"""

from __future__ import annotations

import random
from typing import Final

from kubeprio.api import errors, storagehelpers
from kubeprio.api.core import Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubeprio.api.meta import ApiObject, ObjectMeta
from kubeprio.api.persistentvolume import (
    RECLAIM_DELETE,
    STORAGE,
    VOLUME_RELEASED,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSpec,
    VolumeNodeAffinity,
    claim_class,
    volume_phase,
)
from kubeprio.api.storageclass import BINDING_WAIT_FOR_FIRST_CONSUMER, StorageClass
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock
from kubeprio.controllers.base import Controller, split_key

SIMULATED: Final = "kubeprio.io/simulated"
LOCAL_PATH: Final = "rancher.io/local-path"
SIMULATED_CSI: Final = "csi.kubeprio.io"
"""The simulated provisioner under a CSI driver name (CSIDriver names may not hold ``/``)."""
PROVISIONERS: Final = (SIMULATED, LOCAL_PATH, SIMULATED_CSI)
"""The provisioner names this controller acts for."""
HOSTNAME_LABEL: Final = "kubernetes.io/hostname"
_STORAGE_ROOTS: Final = {
    SIMULATED: "/var/lib/kubeprio/storage",
    SIMULATED_CSI: "/var/lib/kubeprio/csi-storage",
    LOCAL_PATH: "/var/lib/rancher/k3s/storage",
}
CLAIM_PREFIX: Final = "claim:"
VOLUME_PREFIX: Final = "volume:"


class SimulatedProvisioner(Controller):
    """Provisions and deletes volumes for the classes of ``PROVISIONERS``."""

    name = SIMULATED

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
        claims.add_handler(
            FuncHandler(self._enqueue_claim, lambda _o, n: self._enqueue_claim(n), lambda _c: None)
        )
        volumes.add_handler(
            FuncHandler(
                self._enqueue_volume, lambda _o, n: self._enqueue_volume(n), lambda _v: None
            )
        )

    def _enqueue_claim(self, claim: PersistentVolumeClaim) -> None:
        annotations = storagehelpers.annotations_of(claim.metadata)
        if annotations.get(storagehelpers.ANN_STORAGE_PROVISIONER) in PROVISIONERS or (
            annotations.get(storagehelpers.ANN_BETA_STORAGE_PROVISIONER) in PROVISIONERS
        ):
            ns, name = claim.metadata.namespace or "", claim.metadata.name or ""
            self.queue.add(f"{CLAIM_PREFIX}{ns}/{name}")

    def _enqueue_volume(self, volume: PersistentVolume) -> None:
        annotations = storagehelpers.annotations_of(volume.metadata)
        if annotations.get(storagehelpers.ANN_DYNAMICALLY_PROVISIONED) in PROVISIONERS:
            self.queue.add(VOLUME_PREFIX + (volume.metadata.name or ""))

    def event_target(self, key: str) -> ApiObject | None:
        """The claim a key names (volume failures have no event here)."""
        if key.startswith(CLAIM_PREFIX):
            namespace, name = split_key(key.removeprefix(CLAIM_PREFIX))
            return self.claims.get(name, namespace)
        return None

    def reconcile(self, key: str) -> None:
        """Provision for a claim, or delete a released volume."""
        if key.startswith(CLAIM_PREFIX):
            namespace, name = split_key(key.removeprefix(CLAIM_PREFIX))
            claim = self.claims.get(name, namespace)
            if claim is not None:
                self.provision(claim)
            return
        volume = self.volumes.get(key.removeprefix(VOLUME_PREFIX))
        if volume is not None:
            self.delete_if_released(volume)

    # --- provisioning -----------------------------------------------------------------------

    def _should_provision(self, claim: PersistentVolumeClaim) -> tuple[StorageClass | None, str]:
        """The library's ``shouldProvision``: (class, selected node) or (None, "")."""
        if claim.spec is not None and claim.spec.volume_name:
            return None, ""
        if claim.metadata.deletion_timestamp:
            return None, ""
        storage_class = self.classes.get(claim_class(claim))
        if storage_class is None or storage_class.provisioner not in PROVISIONERS:
            return None, ""
        annotations = storagehelpers.annotations_of(claim.metadata)
        node = annotations.get(storagehelpers.ANN_SELECTED_NODE, "")
        if storage_class.volume_binding_mode == BINDING_WAIT_FOR_FIRST_CONSUMER and not node:
            return None, ""
        return storage_class, node

    def provision(self, claim: PersistentVolumeClaim) -> None:
        """Create ``pvc-<uid>`` for ``claim`` if it should have one and has none."""
        storage_class, node_name = self._should_provision(claim)
        if storage_class is None:
            return
        name = f"pvc-{claim.metadata.uid}"
        if self.volumes.get(name) is not None:
            return
        ns, claim_name = claim.metadata.namespace or "", claim.metadata.name or ""
        self.recorder.event(
            claim,
            record.EVENT_TYPE_NORMAL,
            "Provisioning",
            f'External provisioner is provisioning volume for claim "{ns}/{claim_name}"',
        )
        volume = self.volume_for(claim, storage_class, name, node_name)
        try:
            self.client.create(volume)
        except errors.AlreadyExistsError:
            return
        self.recorder.event(
            claim,
            record.EVENT_TYPE_NORMAL,
            "ProvisioningSucceeded",
            f"Successfully provisioned volume {name}",
        )

    def volume_for(
        self, claim: PersistentVolumeClaim, storage_class: StorageClass, name: str, node_name: str
    ) -> PersistentVolume:
        """The volume a provisioner would create for ``claim``."""
        provisioner = storage_class.provisioner or SIMULATED
        spec = claim.spec
        requests = (spec.resources.requests if spec and spec.resources else None) or {}
        ns, claim_name = claim.metadata.namespace or "", claim.metadata.name or ""
        affinity = None
        if provisioner == LOCAL_PATH and node_name:
            affinity = self._hostname_affinity(node_name)
        path = f"{_STORAGE_ROOTS[provisioner]}/{name}_{ns}_{claim_name}"
        return PersistentVolume(
            metadata=ObjectMeta(
                name=name,
                annotations={storagehelpers.ANN_DYNAMICALLY_PROVISIONED: provisioner},
            ),
            spec=PersistentVolumeSpec(
                capacity={STORAGE: requests[STORAGE]} if STORAGE in requests else None,
                access_modes=spec.access_modes if spec else None,
                claim_ref=storagehelpers.claim_reference(claim),
                persistent_volume_reclaim_policy=storage_class.reclaim_policy or RECLAIM_DELETE,
                storage_class_name=storage_class.metadata.name,
                mount_options=storage_class.mount_options,
                volume_mode=spec.volume_mode if spec else None,
                node_affinity=affinity,
                extra={"hostPath": {"path": path, "type": "DirectoryOrCreate"}},
            ),
        )

    def _hostname_affinity(self, node_name: str) -> VolumeNodeAffinity | None:
        """Required affinity to the node's ``kubernetes.io/hostname`` (None if it has none)."""
        try:
            node = self.client.get(Node, node_name)
        except errors.NotFoundError:
            return None
        hostname = (node.metadata.labels or {}).get(HOSTNAME_LABEL)
        if hostname is None:
            return None
        requirement = NodeSelectorRequirement(key=HOSTNAME_LABEL, operator="In", values=(hostname,))
        term = NodeSelectorTerm(match_expressions=(requirement,))
        return VolumeNodeAffinity(required=NodeSelector(node_selector_terms=(term,)))

    # --- deleting -----------------------------------------------------------------------------

    def delete_if_released(self, volume: PersistentVolume) -> None:
        """The library's ``shouldDelete``: Released, policy Delete, provisioned by us."""
        if volume_phase(volume) != VOLUME_RELEASED or volume.metadata.deletion_timestamp:
            return
        policy = volume.spec.persistent_volume_reclaim_policy if volume.spec else None
        if policy != RECLAIM_DELETE:
            return
        try:
            self.client.delete(PersistentVolume, volume.metadata.name or "")
        except errors.NotFoundError:
            return
