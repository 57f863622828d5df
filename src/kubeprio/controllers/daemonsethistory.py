"""A DaemonSet's history: one ControllerRevision per pod template it has run.

Mirrors ``pkg/controller/daemon/update.go``:

* ``revision_data`` (``getPatch``): the strategic merge patch that restores the template,
  ``{"spec": {"template": {..., "$patch": "replace"}}}``, keys sorted as Go's
  ``json.Marshal`` of a map sorts them; ``kubectl rollout undo`` sends it back as it is;
* ``matches`` (``Match``): whether a revision holds the DaemonSet's current template
  (upstream compares the patch bytes; here the JSON values, where an explicit ``null``
  equals an absent field, as it does after Go's decoding);
* ``construct_history`` (``constructHistory``): label old revisions that lack
  ``controller-revision-hash`` with their name; split the controlled revisions into the
  current one and the old ones; create the current one when missing (``snapshot``: name
  ``<daemonset>-<hash>``, the template's labels plus the hash, the DaemonSet's
  annotations, revision ``max(old) + 1``), or move an old template that came back (a
  rollback) to the next revision; duplicates of the current one are deleted after their
  pods are relabelled (``dedupCurHistories``); a name taken by another template bumps
  ``status.collisionCount`` (``snapshot``'s collision handling) and fails the sync;
* ``cleanup_history`` (``cleanupHistory``): delete the oldest old revisions beyond
  ``revisionHistoryLimit`` whose hash no pod of the DaemonSet carries any more.

The hash is ``controllers.deploymentutil.pod_template_hash`` (FNV over canonical JSON,
docs/kubelet-and-controllers.md). Writes through the ``Client`` it is handed; called by
``controllers.daemonset``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Sequence
from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.core import Pod, PodTemplateSpec
from kubeprio.api.daemonset import CONTROLLER_REVISION_HASH_LABEL, DaemonSet
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, evolve
from kubeprio.api.patch import PatchType
from kubeprio.api.serialization import to_dict
from kubeprio.client.protocol import Client
from kubeprio.controllers import deploymentutil, podutil
from kubeprio.errors import KubeprioError

PATCH_DIRECTIVE: Final = "$patch"


class StaleCollisionCountError(KubeprioError):
    """The informer's ``collisionCount`` is behind the API's: the sync is retried (with
    backoff, as any API error) once the informer has caught up."""


def _template(ds: DaemonSet) -> PodTemplateSpec:
    return (ds.spec.template if ds.spec else None) or PodTemplateSpec()


def _sorted(value: Any) -> Any:
    """The JSON value with every object's keys in sorted order (Go's map marshalling)."""
    return json.loads(json.dumps(value, sort_keys=True))


def go_template_json(template: PodTemplateSpec) -> JsonDict:
    """The template as Go's ``json.Marshal`` of a ``v1.PodTemplateSpec`` writes it, keys
    sorted: ``to_dict`` writes the zero values of its unset struct fields
    (``metadata.creationTimestamp: null``, each container's ``resources: {}``), which
    kubectl's byte comparison of a revision with the DaemonSet (``rollout undo``) also
    produces."""
    document: JsonDict = _sorted(to_dict(template))  # a copy: extra values are shared
    return document


def template_patch(template: PodTemplateSpec) -> JsonDict:
    """``getPatch`` (the DaemonSet's and the StatefulSet's are alike): a strategic merge
    patch replacing ``spec.template`` with ``template``, keys sorted as Go marshals them."""
    document = {**go_template_json(template), PATCH_DIRECTIVE: "replace"}
    data: JsonDict = _sorted({"spec": {"template": document}})
    return data


def revision_data(ds: DaemonSet) -> JsonDict:
    """``getPatch``: a strategic merge patch replacing ``spec.template`` with the current one."""
    return template_patch(_template(ds))


def _without_nulls(value: Any) -> Any:
    """The JSON value with ``null`` members dropped: Go decodes them as absent."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def matches(ds: DaemonSet, revision: ControllerRevision) -> bool:
    """``Match``: the revision's data is the patch ``getPatch`` makes of the DaemonSet now
    (upstream compares the bytes of two Go marshallings; here the JSON values, with a
    ``null`` member equal to an absent one)."""
    return bool(_without_nulls(revision.data) == _without_nulls(revision_data(ds)))


def revision_hash(ds: DaemonSet) -> str:
    """``ComputeHash(&ds.Spec.Template, ds.Status.CollisionCount)``."""
    collisions = ds.status.collision_count if ds.status else None
    return deploymentutil.pod_template_hash(_template(ds), collisions)


def new_revision(ds: DaemonSet, revision: int) -> ControllerRevision:
    """The revision ``snapshot`` creates for the current template."""
    hash_ = revision_hash(ds)
    template_labels = (_template(ds).metadata or ObjectMeta()).labels or {}
    annotations = ds.metadata.annotations
    return ControllerRevision(
        metadata=ObjectMeta(
            name=f"{ds.metadata.name}-{hash_}",
            namespace=ds.metadata.namespace,
            labels={**template_labels, CONTROLLER_REVISION_HASH_LABEL: hash_},
            annotations=dict(annotations) if annotations else None,
            owner_references=(podutil.new_controller_ref(ds),),
        ),
        data=revision_data(ds),
        revision=revision,
    )


def max_revision(revisions: Iterable[ControllerRevision]) -> int:
    """``maxRevision``: 0 for none."""
    return max((r.revision or 0 for r in revisions), default=0)


def _by_revision(revision: ControllerRevision) -> tuple[int, str]:
    return revision.revision or 0, revision.metadata.name or ""


def hash_of(obj: Pod | ControllerRevision) -> str | None:
    """The ``controller-revision-hash`` label."""
    return obj.metadata.label(CONTROLLER_REVISION_HASH_LABEL)


# --- writes -----------------------------------------------------------------------------------


def _snapshot(client: Client, ds: DaemonSet, revision: int) -> ControllerRevision:
    """``snapshot``: create the current revision; a name clash with another template bumps
    ``status.collisionCount`` and fails the sync (the next one hashes differently)."""
    wanted = new_revision(ds, revision)
    try:
        return client.create(wanted)
    except errors.AlreadyExistsError:
        name = wanted.metadata.name or ""
        namespace = ds.metadata.namespace
        existing = client.get(ControllerRevision, name, namespace)
        if matches(ds, existing):
            return existing
        current = client.get(DaemonSet, ds.metadata.name or "", namespace)
        stale = current.status.collision_count if current.status else None
        seen = ds.status.collision_count if ds.status else None
        if stale != seen:
            raise StaleCollisionCountError(
                f"found a stale collision count ({seen}, expected {stale}) of DaemonSet "
                f'"{ds.metadata.name}" while processing; will retry until it is updated'
            ) from None
        status = evolve(current.status, collision_count=(stale or 0) + 1)
        client.update_status(evolve(current, status=status))
        raise


def _dedup(
    client: Client, current: list[ControllerRevision], pods: Sequence[Pod]
) -> ControllerRevision:
    """``dedupCurHistories``: keep the highest revision, relabel pods, delete the others."""
    if len(current) == 1:
        return current[0]
    keep = max(current, key=_by_revision)
    keep_hash = hash_of(keep) or ""
    for pod in pods:
        if hash_of(pod) != keep_hash:
            client.patch(
                Pod,
                pod.metadata.name or "",
                {"metadata": {"labels": {CONTROLLER_REVISION_HASH_LABEL: keep_hash}}},
                namespace=pod.metadata.namespace,
                patch_type=PatchType.MERGE_PATCH,
            )
    for revision in current:
        if revision.metadata.name != keep.metadata.name:
            client.delete(
                ControllerRevision, revision.metadata.name or "", revision.metadata.namespace
            )
    return keep


def construct_history(
    client: Client,
    ds: DaemonSet,
    controlled: Sequence[ControllerRevision],
    pods: Sequence[Pod],
) -> tuple[ControllerRevision, list[ControllerRevision]]:
    """``constructHistory``: the current revision (created or moved up) and the old ones."""
    current: list[ControllerRevision] = []
    old: list[ControllerRevision] = []
    for revision in sorted(controlled, key=_by_revision):
        if hash_of(revision) is None:
            labels = {
                **(revision.metadata.labels or {}),
                CONTROLLER_REVISION_HASH_LABEL: revision.metadata.name or "",
            }
            revision = client.update(
                evolve(revision, metadata=evolve(revision.metadata, labels=labels))
            )
        (current if matches(ds, revision) else old).append(revision)
    next_revision = max_revision(old) + 1
    if not current:
        return _snapshot(client, ds, next_revision), old
    cur = _dedup(client, current, pods)
    if (cur.revision or 0) < next_revision:
        client.update(evolve(cur, revision=next_revision))
    return cur, old


def cleanup_history(
    client: Client,
    ds: DaemonSet,
    old: Sequence[ControllerRevision],
    pods: Iterable[Pod],
) -> None:
    """``cleanupHistory``: keep ``revisionHistoryLimit`` old revisions (and any whose hash a
    pod still carries), deleting the oldest first."""
    limit = ds.spec.revision_history_limit if ds.spec else None
    to_kill = len(old) - (10 if limit is None else limit)
    if to_kill <= 0:
        return
    live = {h for pod in pods if (h := hash_of(pod))}
    for revision in sorted(old, key=_by_revision):
        if to_kill <= 0:
            break
        if hash_of(revision) in live:
            continue
        with contextlib.suppress(errors.NotFoundError):  # already gone counts as cleaned
            client.delete(
                ControllerRevision, revision.metadata.name or "", revision.metadata.namespace
            )
        to_kill -= 1
