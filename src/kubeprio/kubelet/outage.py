"""Simulated kubelet outages: the Node annotation ``kubeprio.io/fail-at``.

A Node annotated ``kubeprio.io/fail-at: <duration>`` (``api.annotations`` syntax, as
``kubeprio.io/submit-at``) loses its kubelet once that much time has passed since the
origin (the start of a simulation; ``kubeprio serve``'s start, so ``0s`` means now): the
kubelet stops renewing its Lease (``kubelet.nodelease``), posting node status and acting
on its pods (``sim.drive.KubeletFleet``), as a machine that lost power or its network.
Pods deleted meanwhile stay Terminating until the node comes back, is deleted, or pod GC
collects them (``out-of-service`` taint). Removing the annotation (or moving it into the
future) brings the kubelet back: it reports Ready again and goes on where it stopped.

``NodeOutages`` follows the annotation through node informer events. It is a kubeprio
contract (docs/design.md's annotation table); upstream has nothing like it. Pure
bookkeeping: no I/O, time from the injected clock.
"""

from __future__ import annotations

import logging
from typing import Final

from kubeprio.api.annotations import AnnotationError, parse_duration
from kubeprio.api.core import Node
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.clock import Clock

LOG: Final = logging.getLogger("kubeprio.kubelet")
FAIL_AT: Final = "kubeprio.io/fail-at"


def fail_at(node: Node) -> float | None:
    """The node's ``kubeprio.io/fail-at`` in seconds, or None (absent or unparsable)."""
    text = (node.metadata.annotations or {}).get(FAIL_AT)
    if text is None:
        return None
    try:
        return parse_duration(text)
    except AnnotationError as exc:
        LOG.warning("node %s: ignoring %s: %s", node.metadata.name, FAIL_AT, exc)
        return None


class NodeOutages:
    """When each annotated node's kubelet fails, relative to an origin."""

    def __init__(self, clock: Clock, nodes: Informer[Node] | None = None) -> None:
        self._clock = clock
        self.origin = clock.now()
        self._fail_at: dict[str, float] = {}
        self._annotated: set[str] = set()
        """Nodes that carried the annotation at some point (their kubelets keep a Lease)."""
        if nodes is not None:
            nodes.add_handler(
                FuncHandler(self.observe, lambda _old, new: self.observe(new), self.forget)
            )

    def observe(self, node: Node) -> None:
        """Note the node's annotation (added, changed or removed)."""
        name = node.metadata.name or ""
        seconds = fail_at(node)
        if seconds is None:
            self._fail_at.pop(name, None)
        else:
            self._fail_at[name] = self.origin + seconds
            self._annotated.add(name)

    def forget(self, node: Node) -> None:
        """The node is gone."""
        self._fail_at.pop(node.metadata.name or "", None)
        self._annotated.discard(node.metadata.name or "")

    def fails_at(self, name: str) -> float | None:
        """When the node's kubelet fails (epoch seconds), if it is annotated."""
        return self._fail_at.get(name)

    def failed(self, name: str) -> bool:
        """Whether the node's kubelet is down now."""
        at = self._fail_at.get(name)
        return at is not None and self._clock.now() >= at

    def may_fail(self, node: Node) -> bool:
        """Whether the node carries the annotation, or did (a simulation keeps a Lease for
        it, and the node lifecycle controller watches it, also after it came back)."""
        name = node.metadata.name or ""
        return name in self._annotated or FAIL_AT in (node.metadata.annotations or {})
