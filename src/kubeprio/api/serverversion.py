"""The Kubernetes version kubeprio speaks: one release for the API server and its nodes.

``/version`` answers it (``apiserver.discovery``; its minor, "32", makes kubectl's version
dispatcher pick kubectl 1.32) and every simulated kubelet reports it as
``status.nodeInfo.kubeletVersion`` (``kubelet.node``), as the nodes of a real v1.32
cluster do: upstream's version-skew policy never lets a kubelet be newer than its API
server. The ``-kubeprio`` suffix tells a user the components are kubeprio's.

Pure: constants only.
"""

from __future__ import annotations

from typing import Final

MAJOR: Final = "1"
MINOR: Final = "32"
GIT_VERSION: Final = f"v{MAJOR}.{MINOR}.0-kubeprio"
