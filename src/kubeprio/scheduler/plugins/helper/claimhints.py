"""The queueing hint of a claim event for the volume plugins that read a pod's claims.

Upstream's VolumeRestrictions (``isSchedulableAfterPersistentVolumeClaimAdded``) and
VolumeZone (``isSchedulableAfterPersistentVolumeClaimChange``) answer a claim event the
same way: only a claim in the pod's namespace that one of its ``persistentVolumeClaim``
volumes names can help. Pure: reads the event objects only.
"""

from __future__ import annotations

from kubeprio.api.persistentvolume import PersistentVolumeClaim
from kubeprio.api.storagehelpers import pod_persistent_claim_names
from kubeprio.scheduler import framework
from kubeprio.scheduler.events import QueueingHint


def after_named_claim(
    pod: framework.PodInfo, old: object | None, new: object | None
) -> QueueingHint:
    """Queue the pod when the added or updated claim is one its volumes name."""
    if not isinstance(new, PersistentVolumeClaim):
        return QueueingHint.QUEUE
    if new.metadata.namespace != pod.pod.metadata.namespace:
        return QueueingHint.QUEUE_SKIP
    names = pod_persistent_claim_names(pod.pod)
    return QueueingHint.QUEUE if new.metadata.name in names else QueueingHint.QUEUE_SKIP
