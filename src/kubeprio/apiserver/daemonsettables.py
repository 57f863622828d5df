"""The Table cells of DaemonSets and ControllerRevisions (``kubectl get ds/controllerrevisions``).

Mirrors upstream's ``pkg/printers/internalversion/printers.go``:

* ``printDaemonSet``: ``DESIRED CURRENT READY UP-TO-DATE AVAILABLE`` from the status and
  ``NODE SELECTOR``, the template's ``nodeSelector`` as ``labels.FormatLabels`` prints it
  (``k=v`` sorted by key, comma-joined, ``<none>`` when empty);
* ``printControllerRevision``: ``CONTROLLER``, the controlling owner as
  ``<kind>.<group>/<name>`` in lower case (``daemonset.apps/fluentd``) or ``<none>``, and
  ``REVISION``.

Only the middle cells are here: ``apiserver.tables`` adds NAME, AGE and the template's
wide cells and owns the column definitions. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from kubeprio.api.controllerrevision import ControllerRevision
from kubeprio.api.daemonset import DaemonSet

NONE: Final = "<none>"


def format_labels(labels: Mapping[str, str] | None) -> str:
    """``labels.FormatLabels``: ``k=v`` pairs sorted by key, comma-joined; ``<none>`` if empty."""
    if not labels:
        return NONE
    return ",".join(f"{key}={labels[key]}" for key in sorted(labels))


def daemon_set_cells(ds: DaemonSet) -> list[Any]:
    """DESIRED, CURRENT, READY, UP-TO-DATE, AVAILABLE and NODE SELECTOR of a DaemonSet."""
    status = ds.status
    template = ds.spec.template if ds.spec else None
    node_selector = template.spec.node_selector if template and template.spec else None
    return [
        (status.desired_number_scheduled if status else None) or 0,
        (status.current_number_scheduled if status else None) or 0,
        (status.number_ready if status else None) or 0,
        (status.updated_number_scheduled if status else None) or 0,
        (status.number_available if status else None) or 0,
        format_labels(node_selector),
    ]


def _group_kind(api_version: str, kind: str) -> str:
    """``schema.GroupKind.String`` of an owner: ``DaemonSet.apps`` (a core kind bare)."""
    group = api_version.rpartition("/")[0]
    return f"{kind}.{group}" if group else kind


def controller_cell(revision: ControllerRevision) -> str:
    """CONTROLLER: ``daemonset.apps/<name>`` for the controlling owner, else ``<none>``."""
    ref = revision.metadata.controller_ref()
    if ref is None:
        return NONE
    return f"{_group_kind(ref.api_version or '', ref.kind or '').lower()}/{ref.name or ''}"
