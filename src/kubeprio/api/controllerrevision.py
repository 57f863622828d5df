"""apps/v1 ControllerRevision: an immutable snapshot of a controller's pod template.

Mirrors ``k8s.io/api/apps/v1/types.go`` ``ControllerRevision``. The DaemonSet controller
keeps one per template it has run, named ``<daemonset>-<hash>``, owned by the DaemonSet and
labelled ``controller-revision-hash``; ``data`` is a strategic merge patch that restores
the template (``{"spec": {"template": {"$patch": "replace", ...}}}``, what ``kubectl rollout
undo`` sends back) and ``revision`` its place in the history (``kubectl rollout history``).
``data`` is a ``runtime.RawExtension`` upstream: any JSON object, kept as it is.

Pure data: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ControllerRevision:
    """An apps/v1 ControllerRevision."""

    api_version: str | None = "apps/v1"
    kind: str | None = "ControllerRevision"
    metadata: ObjectMeta = ObjectMeta()
    data: JsonDict | None = None
    revision: int | None = None
    extra: JsonDict = extra_field()
