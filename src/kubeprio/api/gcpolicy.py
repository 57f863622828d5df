"""Which garbage-collection finalizers a delete request puts on the object it deletes.

What it is: the pure rules of upstream's generic registry store for ``DeleteOptions``'
``propagationPolicy`` (``shouldOrphanDependents``, ``shouldDeleteDependents`` and
``deletionFinalizersForGarbageCollection`` in
``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``):

* ``Orphan`` (or the legacy ``orphanDependents: true``) puts the ``orphan`` finalizer on
  the object, ``Foreground`` puts ``foregroundDeletion``; ``Background`` puts neither and
  takes away one already there. The request's policy wins over a finalizer already on
  the object, which wins over the kind's default.
* The default of the kind, ``DefaultGarbageCollectionPolicy``, is to delete dependents in
  the background, except for the two kinds whose strategies keep v1's old behaviour:
  ReplicationControllers (``pkg/registry/core/replicationcontroller/strategy.go``) and
  batch/v1 Jobs (``pkg/registry/batch/job/strategy.go``) orphan their dependents when the
  request names no policy. A Job deleted that way also gets the warning of the Job REST's
  ``Delete`` (``JOB_ORPHAN_WARNING``, ``pkg/registry/batch/job/storage/storage.go``).

kubeprio's garbage collector (``controllers.garbagecollector``) honours the finalizers only
for the owner kinds it watches (``COLLECTED_OWNER_KINDS``, the list ``sim.controlplane``
gives it); for any other kind the finalizers are not added, so that nothing waits for a
collector that never comes: such an object goes at once, as before (documented in
docs/http-api.md).

Who drives it: ``apiserver.servicewrites`` (``delete_object``) before it plans the delete.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

ORPHAN_FINALIZER: Final = "orphan"
"""``metav1.FinalizerOrphanDependents``."""
FOREGROUND_FINALIZER: Final = "foregroundDeletion"
"""``metav1.FinalizerDeleteDependents``."""
ORPHAN: Final = "Orphan"
FOREGROUND: Final = "Foreground"
BACKGROUND: Final = "Background"

COLLECTED_OWNER_KINDS: Final = frozenset(
    {
        "Deployment",
        "ReplicaSet",
        "ReplicationController",
        "Job",
        "CronJob",
        "DaemonSet",
        "StatefulSet",
        "Pod",
    }
)
"""The owner kinds whose deletion in the foreground or with orphaning the garbage
collector carries out (keep in step with the owners ``sim.controlplane`` gives it)."""

ORPHANING_BY_DEFAULT: Final = frozenset(
    {("", "v1", "ReplicationController"), ("batch", "v1", "Job")}
)
"""(group, version, kind) whose ``DefaultGarbageCollectionPolicy`` is ``OrphanDependents``."""

JOB_ORPHAN_WARNING: Final = (
    "child pods are preserved by default when jobs are deleted; set "
    "propagationPolicy=Background to remove them or set propagationPolicy=Orphan to "
    "suppress this warning"
)
"""The Job REST's ``deleteOptionWarnings``."""


def default_policy(group: str, version: str, kind: str) -> str:
    """``DefaultGarbageCollectionPolicy`` of the kind at the request's version."""
    return ORPHAN if (group, version, kind) in ORPHANING_BY_DEFAULT else BACKGROUND


def effective_policy(requested: str | None, finalizers: Sequence[str], default: str) -> str:
    """The policy a delete carries out: the request's, else the one a finalizer already on
    the object asks for (``orphan`` first, as ``shouldOrphanDependents`` reads them in
    order and validation forbids both), else the kind's default."""
    if requested in (ORPHAN, FOREGROUND, BACKGROUND):
        return requested
    for finalizer in finalizers:
        if finalizer == ORPHAN_FINALIZER:
            return ORPHAN
        if finalizer == FOREGROUND_FINALIZER:
            return FOREGROUND
    return default


def finalizers_after_delete(finalizers: Sequence[str], policy: str) -> tuple[str, ...] | None:
    """``deletionFinalizersForGarbageCollection``: the object's finalizers with the GC ones
    replaced as ``policy`` says, or None when the set does not change (the object keeps its
    list as it is)."""
    kept = [f for f in finalizers if f not in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)]
    if policy == ORPHAN:
        kept.append(ORPHAN_FINALIZER)
    elif policy == FOREGROUND:
        kept.append(FOREGROUND_FINALIZER)
    if set(kept) == set(finalizers):
        return None
    return tuple(kept)
