"""Defaulting of core/v1 ReplicationControllers (``SetDefaults_ReplicationController`` in
``pkg/apis/core/v1/defaults.go``).

* when the template has labels (a non-nil map, even an empty one): an empty
  ``spec.selector`` becomes the template's labels, and so do empty ``metadata.labels``;
* ``spec.replicas`` defaults to 1;
* the pod template, when there is one (``spec.template`` is a pointer), gets the pod-spec
  defaults every workload template gets (the generated
  ``SetObjectDefaults_ReplicationController``).

Called by ``api.defaults.default_object`` (which passes the template defaulter);
idempotent. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from kubeprio.api.core import PodTemplateSpec
from kubeprio.api.model import evolve
from kubeprio.api.replicationcontroller import ReplicationController, ReplicationControllerSpec

DEFAULT_REPLICAS: Final = 1


def default_replication_controller(
    rc: ReplicationController,
    *,
    default_template: Callable[[PodTemplateSpec | None], PodTemplateSpec],
) -> ReplicationController:
    """``SetDefaults_ReplicationController`` plus the template's defaults."""
    spec = rc.spec or ReplicationControllerSpec()
    changes: dict[str, Any] = {}
    template = spec.template
    labels = template.metadata.labels if template and template.metadata else None
    metadata = rc.metadata
    if labels is not None:
        if not spec.selector:
            changes["selector"] = dict(labels)
        if not metadata.labels:
            metadata = evolve(metadata, labels=dict(labels))
    if spec.replicas is None:
        changes["replicas"] = DEFAULT_REPLICAS
    # A pointer upstream: a missing template stays missing (validation requires one).
    defaulted = default_template(template) if template is not None else None
    if defaulted is not template:
        changes["template"] = defaulted
    if not changes and rc.spec is not None and metadata is rc.metadata:
        return rc
    return evolve(rc, metadata=metadata, spec=evolve(spec, **changes))
