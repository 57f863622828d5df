"""``pods/exec``, ``pods/attach`` and ``pods/portforward``: upstream's checks, then the
answer of a node whose containers run no processes.

Upstream's API server finds where to stream (``ExecLocation``, ``AttachLocation`` and
``PortForwardLocation`` in ``pkg/registry/core/pod/strategy.go``): the pod must exist
(404), the container must be valid or the only one (``validateContainer``, the same 400s
as ``pods/log``), and the pod must have a node (400 "pod x does not have a host
assigned"). It then proxies the connection to that node's kubelet, whose container
runtime starts the process or opens the port, and a failure there reaches kubectl as a
500: ``error: Internal error occurred: error executing command in container: ...``.

kubeprio's kubelets are simulated: a container has a state but no process, so there is
nothing to run a command in, attach to, or forward a port to. After upstream's checks the
answer is that same 500, with the runtime's part of the message saying so. This goes
beyond upstream (a real runtime would run the command); it never contradicts it: every
request upstream refuses is refused here first, with upstream's words.

Who drives it: ``apiserver.rest`` for GET and POST on the three subresources (kubectl
v1.32 tries a WebSocket GET, then falls back to an SPDY POST). Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api import errors
from kubeprio.api.core import Pod
from kubeprio.apiserver import podlogs

EXEC: Final = "exec"
ATTACH: Final = "attach"
PORT_FORWARD: Final = "portforward"
STREAMS: Final = frozenset((EXEC, ATTACH, PORT_FORWARD))

NO_PROCESS: Final = "kubeprio's simulated containers run no processes"
"""The runtime's part of the answer (what a real container runtime would do instead)."""

_FAILURES: Final = {
    EXEC: "error executing command in container",
    ATTACH: "error attaching to container",
    PORT_FORWARD: "error forwarding port",
}
"""How the kubelet words each failure (``pkg/kubelet/server/server.go`` and the CRI
streaming server), before the runtime's reason."""


def refuse(pod: Pod, subresource: str, container: str) -> errors.StatusError:
    """Upstream's checks for streaming to ``pod`` (they raise their own errors), then
    the node's answer: nothing can be streamed to a simulated container."""
    if subresource != PORT_FORWARD:
        # Port forwarding names no container (the pod's network namespace is shared).
        podlogs.container_for(pod, container)
    if not (pod.spec and pod.spec.node_name):
        raise errors.bad_request(f"pod {pod.metadata.name or ''} does not have a host assigned")
    return errors.internal_error(f"{_FAILURES[subresource]}: {NO_PROCESS}")
