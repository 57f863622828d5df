"""The kubelet's node status loop, reduced to the one thing it changes here: a running
kubelet whose Node was marked not Ready by someone else posts Ready again.

Upstream's kubelet runs ``syncNodeStatus`` every ``--node-status-update-frequency``
(10 s, ``wait.JitterUntil`` with factor 0.04; ``pkg/kubelet/kubelet_node_status.go``).
``tryUpdateNodeStatus`` builds the status it sees (Ready True for a healthy kubelet)
over the Node as stored and writes it when ``nodeStatusHasChanged`` (the conditions,
compared without their heartbeat times) or when ``--node-status-report-frequency``
(5 min) has passed. So when the node lifecycle controller set Ready ``Unknown`` because
it missed the kubelet's lease renewals for a grace period (a stalled control plane, a
slow network) while the kubelet itself kept running, the kubelet's next sync puts Ready
back to True (the ``NodeReady`` event with it) at most ~10 s later.

kubeprio's kubelets post their conditions themselves only at start, after a simulated
outage (``kubelet.outage``) and when pressure flips (``kubelet.pressure``); every other
10 s tick would see the same conditions and write nothing (the 5 min heartbeat refresh
is left out: the node lifecycle controller reads the Lease). What the ticks would catch
is a Ready condition *someone else* took away from a running kubelet: ``observe`` sees
the Node's update (Ready was True, is not any more) and plans one sync at the kubelet's
next tick; the kubelet then posts its conditions as after an outage
(``Kubelet.resume``). A Node declared not Ready from the start (a manifest, a test) is
left as it is, as before.

Ticks lie on a 10 s grid from the kubelet's start, shifted by a phase drawn from the
node's name (the kubelets of ``kubeprio serve`` all start in the same instant; a real
fleet's do not), so nothing is drawn from the seeded random streams. Pure bookkeeping,
driven by ``sim.drive.KubeletFleet`` (node events) and ``kubelet.kubelet`` (timers).
"""

from __future__ import annotations

import math
import zlib
from typing import Final

from kubeprio.api.core import Node
from kubeprio.api.nodeconditions import ready_condition

NODE_STATUS_UPDATE_FREQUENCY: Final = 10.0
"""The kubelet's ``--node-status-update-frequency`` default (seconds)."""


def _ready(node: Node) -> str | None:
    condition = ready_condition(node)
    return condition.status if condition is not None else None


def tick_phase(node_name: str) -> float:
    """Where in its 10 s period this node's status loop ticks (stable per name)."""
    return (zlib.crc32(node_name.encode()) % 10_000) / 10_000 * NODE_STATUS_UPDATE_FREQUENCY


class NodeStatusSync:
    """When the kubelet next posts its node's conditions because someone changed Ready."""

    def __init__(self, node_name: str, *, origin: float) -> None:
        self._grid_start = origin + tick_phase(node_name)
        self.due: float | None = None
        """The planned sync, if any."""

    def next_tick(self, now: float) -> float:
        """The first tick of the status loop strictly after ``now``."""
        period = NODE_STATUS_UPDATE_FREQUENCY
        ticks = max(math.floor((now - self._grid_start) / period) + 1, 0)
        return self._grid_start + ticks * period

    def observe(self, old: Node, new: Node, now: float) -> bool:
        """A Node update seen while the kubelet runs; True when a sync was planned (Ready
        went from True to something else)."""
        if _ready(new) == "True":
            self.due = None  # posted again meanwhile (by this kubelet, or anyone)
            return False
        if self.due is not None or _ready(old) != "True":
            return False
        self.due = self.next_tick(now)
        return True

    def take_due(self, now: float) -> bool:
        """Whether the planned sync is due now (it is then no longer planned)."""
        if self.due is None or self.due > now:
            return False
        self.due = None
        return True
