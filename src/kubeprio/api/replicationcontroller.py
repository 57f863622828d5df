"""core/v1 ReplicationController: the ReplicaSet's predecessor, with a plain-map selector.

Mirrors ``k8s.io/api/core/v1/types.go`` (``ReplicationController``, its spec and status).
Upstream runs the ReplicaSet controller for it (``pkg/controller/replication`` adapts the
kind), so kubeprio's ``controllers.replication`` does the same over
``controllers.replicaset``. The status conditions are the ReplicaSet's shape
(``WorkloadCondition``; a ReplicationController's lack only ``lastUpdateTime``, which is
never set for either).

Also here: :func:`selector_as_label_selector`, the map as the ``LabelSelector`` with only
``matchLabels`` that every reader taking a ReplicaSet's selector needs (upstream's
``labels.SelectorFromSet``; a nil or empty map selects nothing there, as an empty
``matchLabels`` does for the controllers). Pure data: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from kubeprio.api.apps import WorkloadCondition
from kubeprio.api.core import PodTemplateSpec
from kubeprio.api.meta import LabelSelector, ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init

KIND: Final = "ReplicationController"


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicationControllerSpec:
    """``spec``: replicas, minReadySeconds, a label map selector and the pod template."""

    replicas: Int32 | None = None
    min_ready_seconds: Int32 | None = None
    selector: Mapping[str, str] | None = None
    template: PodTemplateSpec | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicationControllerStatus:
    """``status``; Go always writes ``replicas`` (no ``omitempty``)."""

    replicas: Int32 | None = None
    fully_labeled_replicas: Int32 | None = None
    ready_replicas: Int32 | None = None
    available_replicas: Int32 | None = None
    observed_generation: int | None = None
    conditions: tuple[WorkloadCondition, ...] | None = None
    extra: JsonDict = extra_field()


EMPTY_STATUS: Final = ReplicationControllerStatus(replicas=0)
"""What a new ReplicationController starts with (``PrepareForCreate`` resets the status;
Go's JSON still sends ``replicas: 0``)."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicationController:
    """A core/v1 ReplicationController."""

    api_version: str | None = "v1"
    kind: str | None = KIND
    metadata: ObjectMeta = ObjectMeta()
    spec: ReplicationControllerSpec | None = None
    status: ReplicationControllerStatus | None = None
    extra: JsonDict = extra_field()


def selector_as_label_selector(selector: Mapping[str, str] | None) -> LabelSelector | None:
    """The map selector as a ``LabelSelector`` with only ``matchLabels`` (None for none)."""
    if selector is None:
        return None
    return LabelSelector(match_labels=dict(selector))


def label_selector_of(rc: ReplicationController) -> LabelSelector | None:
    """``spec.selector`` of ``rc`` as a ``LabelSelector``."""
    return selector_as_label_selector(rc.spec.selector if rc.spec else None)
