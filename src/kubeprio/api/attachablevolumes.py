"""The volumes of a pod that may count against a node's CSI attach limits.

Upstream's NodeVolumeLimits (``nodevolumelimits/csi.go``, ``filterAttachableVolumes``)
looks at three kinds of pod volume: a ``persistentVolumeClaim`` (resolved through the
claim, its volume and its class when the filter runs), a generic ``ephemeral`` volume
(its claim ``<pod>-<volume>``, which must be owned by the pod) and an inline volume of a
migratable in-tree plugin (translated to its CSI driver, ``api.csitranslation``). This
module turns a pod's ``spec.volumes`` into :class:`VolumeRef` values once per pod object
(``scheduler.framework.PodInfo``), so the scheduler cache can count them per node as pods
come and go, and the filter never walks a node's pods. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, NamedTuple

from kubeprio.api.core import Pod
from kubeprio.api.csitranslation import migratable_source, volume_handle
from kubeprio.api.storagehelpers import ephemeral_claim_name

CLAIM: Final = "claim"
EPHEMERAL: Final = "ephemeral"
INLINE: Final = "inline"


class VolumeRef(NamedTuple):
    """One attachable volume reference of a pod.

    ``claim``: ``scope`` is the namespace, ``name`` the claim. ``ephemeral``: the same,
    plus the pod's uid and name (the claim must be the pod's). ``inline``: ``scope`` is the
    in-tree plugin name, ``name`` the translated CSI volume handle.
    """

    kind: str
    scope: str
    name: str
    pod_uid: str = ""
    pod_name: str = ""


def pod_volume_refs(pod: Pod) -> tuple[VolumeRef, ...]:
    """The pod's claim, ephemeral and migratable inline volumes, in ``spec.volumes`` order."""
    spec = pod.spec
    volumes = spec.extra.get("volumes") if spec is not None else None
    if not volumes or not isinstance(volumes, list):
        return ()
    metadata = pod.metadata
    namespace = metadata.namespace or ""
    refs: list[VolumeRef] = []
    for volume in volumes:
        if not isinstance(volume, Mapping):
            continue
        claim = volume.get("persistentVolumeClaim")
        if isinstance(claim, Mapping):
            refs.append(VolumeRef(CLAIM, namespace, str(claim.get("claimName") or "")))
            continue
        if isinstance(volume.get("ephemeral"), Mapping):
            name = ephemeral_claim_name(pod, str(volume.get("name") or ""))
            refs.append(
                VolumeRef(EPHEMERAL, namespace, name, metadata.uid or "", metadata.name or "")
            )
            continue
        migratable = migratable_source(volume)
        if migratable is not None:
            plugin, source = migratable
            refs.append(VolumeRef(INLINE, plugin.name, volume_handle(plugin, source)))
    return tuple(refs)
