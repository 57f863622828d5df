"""NodePorts: host ports must be free on the node (upstream ``plugins/nodeports``).

PreFilter collects the pod's host ports (app containers and sidecars) and returns SKIP
when there are none; Filter rejects a node where one of them is taken, as
Unschedulable (preempting the pod holding the port can help). A port bound to
``0.0.0.0`` (or no host IP) conflicts with the same protocol/port on any IP, and any
IP conflicts with ``0.0.0.0`` (upstream ``HostPortInfo.CheckConflict``).

Run by ``scheduler.runtime``; Filter reads only the NodeInfo it is handed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Final

from kubeprio.scheduler import framework
from kubeprio.scheduler.snapshot import DEFAULT_BIND_ALL_HOST_IP, HostPort, NodeInfo, host_ports

NAME: Final = "NodePorts"
ERR_REASON: Final = "node(s) didn't have free ports for the requested pod ports"
PRE_FILTER_STATE_KEY: Final = "PreFilter" + NAME

_REJECTED: Final = framework.unschedulable(ERR_REASON)


@dataclasses.dataclass(frozen=True, slots=True)
class _PreFilterState:
    ports: tuple[HostPort, ...]

    def clone(self) -> _PreFilterState:
        return self


def check_conflict(used: Mapping[HostPort, int], port: HostPort) -> bool:
    """Whether ``port`` collides with a port in ``used`` (upstream ``CheckConflict``)."""
    ip, protocol, number = port
    if number <= 0:
        return False
    if ip == DEFAULT_BIND_ALL_HOST_IP:
        # The wildcard collides with this protocol/port on every address.
        for _ip, used_protocol, used_number in used:
            if used_number == number and used_protocol == protocol:
                return True
        return False
    return (ip, protocol, number) in used or (DEFAULT_BIND_ALL_HOST_IP, protocol, number) in used


def fits_ports(wanted: Sequence[HostPort], used: Mapping[HostPort, int]) -> bool:
    """Upstream ``fitsPorts``: no wanted port conflicts with a used one."""
    if not used:
        return True
    for port in wanted:  # noqa: SIM110 (explicit loop)
        if check_conflict(used, port):
            return False
    return True


class NodePorts:
    """Rejects nodes where a host port the pod needs is already taken."""

    name: Final = NAME

    def pre_filter(
        self, state: framework.CycleState, pod: framework.PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[framework.PreFilterResult | None, framework.Status | None]:
        """Collect the pod's host ports; SKIP when it has none."""
        ports = host_ports(pod)
        if not ports:
            return None, framework.SKIP
        state.write(PRE_FILTER_STATE_KEY, _PreFilterState(tuple(ports)))
        return None, None

    def pre_filter_extensions(self) -> framework.PreFilterExtensions | None:
        """None: the state does not depend on other pods."""
        return None

    def filter(
        self, state: framework.CycleState, pod: framework.PodInfo, node: NodeInfo
    ) -> framework.Status | None:
        """Upstream ``NodePorts.Filter``."""
        data = state.read(PRE_FILTER_STATE_KEY)
        if not isinstance(data, _PreFilterState):
            return framework.error(f'reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        return None if fits_ports(data.ports, node.used_ports) else _REJECTED
