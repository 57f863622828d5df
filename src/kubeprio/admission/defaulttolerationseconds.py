"""The DefaultTolerationSeconds admission plugin: every pod tolerates a lost node for 300 s.

Mirrors ``plugin/pkg/admission/defaulttolerationseconds/admission.go`` (v1.32, on by
default): on a pod's create or update (not its subresources), a pod that does not already
tolerate the ``NoExecute`` taint ``node.kubernetes.io/not-ready`` gets::

    {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute,
     tolerationSeconds: 300}

and likewise for ``node.kubernetes.io/unreachable``. A toleration with an empty key (all
taints) or an empty effect (all effects) already covers a taint. The 300 s are
kube-apiserver's ``--default-not-ready-toleration-seconds`` and
``--default-unreachable-toleration-seconds`` defaults. DaemonSet pods arrive with their
own forever-tolerations of both taints (``controllers.daemonsetutil``) and get nothing.

The node lifecycle controller taints a lost node and the taint eviction controller then
evicts its pods after these 300 s (``controllers.nodelifecycle``,
``controllers.tainteviction``); ``serve`` takes both flags (``DefaultTolerations``).
Driven by ``admission.chain``; pure.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from kubeprio.admission.chain import AdmissionOutcome, AdmissionRequest, Operation
from kubeprio.api.core import Pod, Toleration
from kubeprio.api.model import evolve
from kubeprio.api.taints import (
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_NODE_NOT_READY,
    TAINT_NODE_UNREACHABLE,
    TOLERATION_OP_EXISTS,
)

PLUGIN_NAME: Final = "DefaultTolerationSeconds"
DEFAULT_TOLERATION_SECONDS: Final = 300

NOT_READY_TOLERATION: Final = Toleration(
    key=TAINT_NODE_NOT_READY,
    operator=TOLERATION_OP_EXISTS,
    effect=TAINT_EFFECT_NO_EXECUTE,
    toleration_seconds=DEFAULT_TOLERATION_SECONDS,
)
UNREACHABLE_TOLERATION: Final = Toleration(
    key=TAINT_NODE_UNREACHABLE,
    operator=TOLERATION_OP_EXISTS,
    effect=TAINT_EFFECT_NO_EXECUTE,
    toleration_seconds=DEFAULT_TOLERATION_SECONDS,
)
# One shared (frozen) instance each: a cluster of 150,000 pods holds two objects, not 300,000.


@dataclasses.dataclass(frozen=True, slots=True)
class DefaultTolerations:
    """kube-apiserver's ``--default-not-ready-toleration-seconds`` and
    ``--default-unreachable-toleration-seconds``."""

    not_ready_seconds: int = DEFAULT_TOLERATION_SECONDS
    unreachable_seconds: int = DEFAULT_TOLERATION_SECONDS

    def tolerations(self) -> tuple[Toleration, Toleration]:
        """The two tolerations to add (the shared instances at the defaults)."""
        not_ready, unreachable = NOT_READY_TOLERATION, UNREACHABLE_TOLERATION
        if self.not_ready_seconds != DEFAULT_TOLERATION_SECONDS:
            not_ready = dataclasses.replace(not_ready, toleration_seconds=self.not_ready_seconds)
        if self.unreachable_seconds != DEFAULT_TOLERATION_SECONDS:
            unreachable = dataclasses.replace(
                unreachable, toleration_seconds=self.unreachable_seconds
            )
        return not_ready, unreachable


def _tolerates(tolerations: tuple[Toleration, ...], key: str) -> bool:
    """Whether one of ``tolerations`` already covers the ``NoExecute`` taint ``key``
    (upstream's loop: an empty key or effect matches any)."""
    return any(
        (not t.key or t.key == key) and (not t.effect or t.effect == TAINT_EFFECT_NO_EXECUTE)
        for t in tolerations
    )


class DefaultTolerationSecondsPlugin:
    """Upstream ``DefaultTolerationSeconds``: mutating only."""

    admits_kinds = (Pod,)
    ignores_subresources = True

    name = PLUGIN_NAME

    def __init__(self, defaults: DefaultTolerations | None = None) -> None:
        self._tolerations = (defaults or DefaultTolerations()).tolerations()

    def admit(self, request: AdmissionRequest, outcome: AdmissionOutcome) -> Any:
        """Add the two 300 s tolerations a pod lacks (pod create and update only)."""
        pod = request.obj
        if (
            request.subresource
            or request.operation not in (Operation.CREATE, Operation.UPDATE)
            or not isinstance(pod, Pod)
            or pod.spec is None
        ):
            return pod
        tolerations = tuple(pod.spec.tolerations or ())
        added = tuple(
            toleration
            for toleration in self._tolerations
            if not _tolerates(tolerations, toleration.key or "")
        )
        if not added:
            return pod
        return evolve(pod, spec=evolve(pod.spec, tolerations=(*tolerations, *added)))
