"""node.k8s.io/v1 RuntimeClass: a named container runtime configuration for pods.

Mirrors ``k8s.io/api/node/v1/types.go`` (``RuntimeClass``, ``Overhead``, ``Scheduling``):
no ``spec``, the three fields sit at the top level. ``handler`` (no ``omitempty``
upstream, so always sent) names the CRI handler; ``overhead.podFixed`` is the fixed cost
of a pod running under the class, which the RuntimeClass admission plugin copies into
the pod's ``spec.overhead`` (``admission.runtimeclass``); ``scheduling`` restricts pods
of the class to some nodes (``nodeSelector``) and lets them tolerate their taints
(``tolerations``), both merged into the pod at admission. Validation is in
``api.validation.node``. Pure data: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from kubeprio.api.core import ResourceList, Toleration
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, evolve, extra_field, fast_init

GROUP: Final = "node.k8s.io"


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Overhead:
    """The resources a pod of the class costs on top of its containers."""

    pod_fixed: ResourceList | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Scheduling:
    """Where pods of the class may run: a node selector and tolerations to merge in."""

    node_selector: Mapping[str, str] | None = None
    tolerations: tuple[Toleration, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RuntimeClass:
    """A node.k8s.io/v1 RuntimeClass (cluster-scoped)."""

    api_version: str | None = "node.k8s.io/v1"
    kind: str | None = "RuntimeClass"
    metadata: ObjectMeta = ObjectMeta()
    handler: str | None = None
    overhead: Overhead | None = None
    scheduling: Scheduling | None = None
    extra: JsonDict = extra_field()


def default_runtime_class(runtime_class: RuntimeClass) -> RuntimeClass:
    """An absent ``handler`` is ``""``: a plain Go string without ``omitempty``, decoded
    as its zero value and always written back (validation then refuses it)."""
    if runtime_class.handler is None:
        return evolve(runtime_class, handler="")
    return runtime_class
