"""networking.k8s.io/v1 Ingress and IngressClass: HTTP routes to Services, and who serves them.

Mirrors ``k8s.io/api/networking/v1/types.go`` at v1.32: an ``Ingress`` routes hosts and
paths (``spec.rules[].http.paths[]``) to a backend (a Service port, or a ``resource``) and
may terminate TLS (``spec.tls``); ``spec.ingressClassName`` names the ``IngressClass``
(cluster-scoped) whose ``spec.controller`` implements it. An IngressClass annotated
``ingressclass.kubernetes.io/is-default-class: "true"`` is given to new Ingresses that
name no class (the DefaultIngressClass admission plugin, ``admission.ingressclass``).
``IngressRule`` embeds ``IngressRuleValue`` in Go, so ``http`` is a field of the rule here
as in JSON. kubeprio runs no ingress controller: Ingresses are stored and listed, and
their ``status.loadBalancer`` stays empty unless a client writes it. Defaults are in
``api.networkingdefaults``, validation in ``api.validation.ingress``. Pure data: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import Int32, JsonDict, extra_field, fast_init
from kubeprio.api.persistentvolume import TypedLocalObjectReference
from kubeprio.clock import parse_rfc3339

GROUP: Final = "networking.k8s.io"

PATH_TYPE_EXACT: Final = "Exact"
PATH_TYPE_PREFIX: Final = "Prefix"
PATH_TYPE_IMPLEMENTATION_SPECIFIC: Final = "ImplementationSpecific"
PATH_TYPES: Final = (PATH_TYPE_EXACT, PATH_TYPE_IMPLEMENTATION_SPECIFIC, PATH_TYPE_PREFIX)
"""``supportedPathTypes`` (sorted, as ``sets.String.List`` prints them)."""

SCOPE_CLUSTER: Final = "Cluster"
SCOPE_NAMESPACE: Final = "Namespace"
PARAMETER_SCOPES: Final = (SCOPE_CLUSTER, SCOPE_NAMESPACE)
"""``supportedIngressClassParametersReferenceScopes`` (sorted)."""

IS_DEFAULT_CLASS_ANNOTATION: Final = "ingressclass.kubernetes.io/is-default-class"
"""``networkingv1.AnnotationIsDefaultIngressClass``."""
INGRESS_CLASS_ANNOTATION: Final = "kubernetes.io/ingress.class"
"""``networkingv1beta1.AnnotationIngressClass``: the class before ``ingressClassName``."""


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceBackendPort:
    """A Service port by ``name`` or by ``number`` (exactly one)."""

    name: str | None = None
    number: Int32 | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class IngressServiceBackend:
    """A Service in the Ingress's namespace and one of its ports."""

    name: str | None = None
    port: ServiceBackendPort | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class IngressBackend:
    """Where matching traffic goes: a ``service`` or a ``resource`` (exactly one)."""

    service: IngressServiceBackend | None = None
    resource: TypedLocalObjectReference | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HTTPIngressPath:
    """A ``path`` matched as ``pathType`` says, and its backend."""

    path: str | None = None
    path_type: str | None = None
    backend: IngressBackend | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class HTTPIngressRuleValue:
    """The HTTP paths of a rule."""

    paths: tuple[HTTPIngressPath, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class IngressRule:
    """Requests for ``host`` (every host when empty), routed by ``http`` paths."""

    host: str | None = None
    http: HTTPIngressRuleValue | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class IngressTLS:
    """Hosts served over TLS with the certificate in ``secretName``."""

    hosts: tuple[str, ...] | None = None
    secret_name: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class IngressSpec:
    """``spec`` of an Ingress."""

    ingress_class_name: str | None = None
    default_backend: IngressBackend | None = None
    tls: tuple[IngressTLS, ...] | None = None
    rules: tuple[IngressRule, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class IngressLoadBalancerIngress:
    """An address of the load balancer (``ports`` stay in ``extra``)."""

    ip: str | None = None
    hostname: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class IngressLoadBalancerStatus:
    """``status.loadBalancer``: the addresses the controller publishes."""

    ingress: tuple[IngressLoadBalancerIngress, ...] | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class IngressStatus:
    """``status`` of an Ingress."""

    load_balancer: IngressLoadBalancerStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class Ingress:
    """A networking.k8s.io/v1 Ingress (namespaced)."""

    api_version: str | None = "networking.k8s.io/v1"
    kind: str | None = "Ingress"
    metadata: ObjectMeta = ObjectMeta()
    spec: IngressSpec | None = None
    status: IngressStatus | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class IngressClassParametersReference:
    """A cluster- or namespace-scoped object holding the controller's parameters."""

    api_group: str | None = None
    kind: str | None = None
    name: str | None = None
    scope: str | None = None
    namespace: str | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class IngressClassSpec:
    """``spec`` of an IngressClass: the controller and its parameters."""

    controller: str | None = None
    parameters: IngressClassParametersReference | None = None
    extra: JsonDict = extra_field()


@fast_init
@dataclass(frozen=True, slots=True, kw_only=True)
class IngressClass:
    """A networking.k8s.io/v1 IngressClass (cluster-scoped)."""

    api_version: str | None = "networking.k8s.io/v1"
    kind: str | None = "IngressClass"
    metadata: ObjectMeta = ObjectMeta()
    spec: IngressClassSpec | None = None
    extra: JsonDict = extra_field()


def is_default_class(ingress_class: IngressClass) -> bool:
    """The class carries ``ingressclass.kubernetes.io/is-default-class: "true"``."""
    annotations = ingress_class.metadata.annotations or {}
    return annotations.get(IS_DEFAULT_CLASS_ANNOTATION) == "true"


def default_class(classes: Iterable[IngressClass]) -> IngressClass | None:
    """``getDefaultClass`` of the DefaultIngressClass plugin (since v1.25): of the classes
    marked default, the newest by ``creationTimestamp``, equal times by the smaller name;
    None when there is none."""
    defaults = [ic for ic in classes if is_default_class(ic)]
    if not defaults:
        return None

    def created(ic: IngressClass) -> float:
        stamp = ic.metadata.creation_timestamp
        return parse_rfc3339(stamp) if stamp else 0.0

    return min(defaults, key=lambda ic: (-created(ic), ic.metadata.name or ""))
