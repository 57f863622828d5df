"""The resource metrics API types: ``metrics.k8s.io/v1beta1`` PodMetrics and NodeMetrics.

Mirrors ``k8s.io/metrics/pkg/apis/metrics/v1beta1/types.go``, what metrics-server serves
and ``kubectl top`` reads: the CPU and memory usage of each container of a running pod,
and of each node, measured over ``[timestamp - window, timestamp]``. ``window`` is a Go
duration string (``15s``); usage maps ``cpu`` (nanocores, printed as a quantity such as
``250m``) and ``memory`` (working-set bytes, ``900Mi``). These kinds are never stored:
the API server computes them when asked (``apiserver.resourcemetrics``). Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from kubeprio.api.core import ResourceList
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import JsonDict, extra_field, fast_init

GROUP: Final = "metrics.k8s.io"
VERSION: Final = "v1beta1"
API_VERSION: Final = f"{GROUP}/{VERSION}"


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerMetrics:
    """One container of a pod: its name (as in ``spec.containers``) and usage."""

    name: str = ""
    usage: ResourceList | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PodMetrics:
    """A metrics.k8s.io/v1beta1 PodMetrics: the usage of each container of a pod."""

    api_version: str | None = API_VERSION
    kind: str | None = "PodMetrics"
    metadata: ObjectMeta = ObjectMeta()
    timestamp: str | None = None
    window: str | None = None
    containers: tuple[ContainerMetrics, ...] = ()
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class NodeMetrics:
    """A metrics.k8s.io/v1beta1 NodeMetrics: the usage of a whole node."""

    api_version: str | None = API_VERSION
    kind: str | None = "NodeMetrics"
    metadata: ObjectMeta = ObjectMeta()
    timestamp: str | None = None
    window: str | None = None
    usage: ResourceList | None = None
    extra: JsonDict = extra_field()
