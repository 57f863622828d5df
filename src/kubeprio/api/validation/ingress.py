"""Ingress and IngressClass validation (networking.k8s.io/v1).

Mirrors upstream v1.32 ``pkg/apis/networking/validation/validation.go``:

* ``ValidateIngressCreate``/``ValidateIngressUpdate`` (``ValidateIngressSpec``): rules or
  a ``defaultBackend``; a rule's ``host`` is a DNS subdomain (``*.`` wildcards allowed,
  never an IP); HTTP paths need ``pathType`` (no default in v1): ``Exact`` and ``Prefix``
  paths are absolute with no ``//``, ``/./``, ``/../``, ``%2f``, ``%2F`` and no ``/..``
  or ``/.`` ending, ``ImplementationSpecific`` paths absolute when set; a backend is a
  ``service`` (a DNS-1035 name and a port by name or number) or a ``resource``, exactly
  one; TLS hosts and secret names; ``ingressClassName`` a DNS subdomain; on create, the
  ``kubernetes.io/ingress.class`` annotation must match ``ingressClassName``. An update
  keeps accepting invalid TLS secret names and wildcard-host rules already stored
  (``allowInvalidSecretName``, ``allowInvalidWildcardHostRule``).
* ``ValidateIngressStatusUpdate``: load-balancer IPs and host names.
* ``ValidateIngressClass``/``ValidateIngressClassUpdate``: ``controller`` required, at most
  250 bytes, a domain-prefixed path, immutable; ``parameters`` with kind, name and scope
  (``Cluster``, or ``Namespace`` with a namespace).

An Ingress or IngressClass update re-runs the create-time metadata rules (upstream's
update validators call ``validateIngress``/``ValidateIngressClass``), listed in
``validation.__init__``. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Any, Final

from kubeprio.api import errors
from kubeprio.api.errors import FieldError, GoValue
from kubeprio.api.ingress import (
    INGRESS_CLASS_ANNOTATION,
    PARAMETER_SCOPES,
    PATH_TYPE_EXACT,
    PATH_TYPE_IMPLEMENTATION_SPECIFIC,
    PATH_TYPE_PREFIX,
    PATH_TYPES,
    SCOPE_CLUSTER,
    SCOPE_NAMESPACE,
    HTTPIngressPath,
    HTTPIngressRuleValue,
    Ingress,
    IngressBackend,
    IngressClass,
    IngressClassParametersReference,
    IngressRule,
    IngressSpec,
    IngressStatus,
)
from kubeprio.api.persistentvolume import TypedLocalObjectReference
from kubeprio.api.validation.ip import ip_errors, parse_ip
from kubeprio.api.validation.meta import (
    DNS1123_SUBDOMAIN_MAX_LENGTH,
    KindUpdateValidator,
    KindValidator,
    child,
    dns1123_subdomain_errors,
    index,
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
    path_segment_errors,
    validate_immutable,
)
from kubeprio.api.validation.podspec import port_name_errors, port_number_errors

MAX_CONTROLLER_LENGTH: Final = 250
"""``maxLenIngressClassController``."""
INVALID_PATH_SEQUENCES: Final = ("//", "/./", "/../", "%2f", "%2F")
INVALID_PATH_SUFFIXES: Final = ("/..", "/.")
NOT_AN_IP: Final = "must be a DNS name, not an IP address"

_WILDCARD_FMT: Final = r"\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_WILDCARD: Final = re.compile(_WILDCARD_FMT)
WILDCARD_ERROR: Final = (
    "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, "
    "which must consist of lower case alphanumeric characters, '-' or '.' and end with an "
    f"alphanumeric character (e.g. '*.example.com', regex used for validation is '{_WILDCARD_FMT}')"
)
_HTTP_PATH_FMT: Final = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_HTTP_PATH: Final = re.compile(_HTTP_PATH_FMT)


def wildcard_subdomain_errors(value: str) -> list[str]:
    """``IsWildcardDNS1123Subdomain``."""
    messages: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        messages.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} characters")
    if not _WILDCARD.fullmatch(value):
        messages.append(WILDCARD_ERROR)
    return messages


def _host_errors(host: str, path: str) -> list[FieldError]:
    """A host name: a wildcard or a plain DNS subdomain."""
    check = wildcard_subdomain_errors if "*" in host else dns1123_subdomain_errors
    return [errors.invalid(path, host, message) for message in check(host)]


# --- Ingress -----------------------------------------------------------------------------------


def _group_kind_name(
    api_group: str | None, kind: str | None, name: str | None, path: str
) -> list[FieldError]:
    """The checks a typed reference and an IngressClass's parameters share: an optional
    DNS-subdomain ``apiGroup``, then ``kind`` and ``name`` required path segments."""
    found: list[FieldError] = []
    if api_group is not None:
        found.extend(
            errors.invalid(child(path, "apiGroup"), api_group, message)
            for message in dns1123_subdomain_errors(api_group)
        )
    for field, value in (("kind", kind or ""), ("name", name or "")):
        if not value:
            found.append(errors.required(child(path, field)))
        else:
            found.extend(
                errors.invalid(child(path, field), value, message)
                for message in path_segment_errors(value)
            )
    return found


def _typed_reference(ref: TypedLocalObjectReference, path: str) -> list[FieldError]:
    """``validateIngressTypedLocalObjectReference``: a resource backend."""
    return _group_kind_name(ref.api_group, ref.kind, ref.name, path)


def _backend(backend: IngressBackend, path: str) -> list[FieldError]:
    """``validateIngressBackend``: a service or a resource, never both."""
    if backend.resource is not None and backend.service is not None:
        return [errors.invalid(path, "", "cannot set both resource and service backends")]
    if backend.resource is not None:
        return _typed_reference(backend.resource, child(path, "resource"))
    if backend.service is None:
        return [errors.invalid(path, "", "resource or service backend is required")]
    found: list[FieldError] = []
    service = backend.service
    name_path = child(child(path, "service"), "name")
    if not service.name:
        found.append(errors.required(name_path))
    else:
        # v1.32 validates the name as a Service name (ValidateServiceName, DNS-1035).
        found.extend(
            errors.invalid(name_path, service.name, message)
            for message in name_is_dns1035_label(service.name)
        )
    port_path = child(child(path, "service"), "port")
    port_name = service.port.name if service.port is not None else None
    port_number = service.port.number if service.port is not None else None
    if port_name and port_number:
        found.append(errors.invalid(path, "", "cannot set both port name & port number"))
    elif port_name:
        found.extend(
            errors.invalid(child(port_path, "name"), port_name, message)
            for message in port_name_errors(port_name)
        )
    elif port_number:
        found.extend(
            errors.invalid(child(port_path, "number"), port_number, message)
            for message in port_number_errors(port_number)
        )
    else:
        found.append(errors.required(path, "port name or number is required"))
    return found


def _http_path(http_path: HTTPIngressPath, path: str) -> list[FieldError]:
    """``validateHTTPIngressPath``: the path type's rules, then the backend."""
    if http_path.path_type is None:
        return [errors.required(child(path, "pathType"), "pathType must be specified")]
    found: list[FieldError] = []
    value = http_path.path or ""
    value_path = child(path, "path")
    if http_path.path_type in (PATH_TYPE_EXACT, PATH_TYPE_PREFIX):
        if not value.startswith("/"):
            found.append(errors.invalid(value_path, value, "must be an absolute path"))
        if value:
            found.extend(
                errors.invalid(value_path, value, f"must not contain '{sequence}'")
                for sequence in INVALID_PATH_SEQUENCES
                if sequence in value
            )
            found.extend(
                errors.invalid(value_path, value, f"cannot end with '{suffix}'")
                for suffix in INVALID_PATH_SUFFIXES
                if value.endswith(suffix)
            )
    elif http_path.path_type == PATH_TYPE_IMPLEMENTATION_SPECIFIC:
        if value and not value.startswith("/"):
            found.append(errors.invalid(value_path, value, "must be an absolute path"))
    else:
        found.append(errors.not_supported(child(path, "pathType"), http_path.path_type, PATH_TYPES))
    found.extend(_backend(http_path.backend or IngressBackend(), child(path, "backend")))
    return found


def _rule_value(http: HTTPIngressRuleValue | None, path: str) -> list[FieldError]:
    """``validateIngressRuleValue``: the HTTP paths, at least one."""
    if http is None:
        return []
    http_path = child(path, "http")
    found: list[FieldError] = []
    if not http.paths:
        found.append(errors.required(child(http_path, "paths")))
    for position, entry in enumerate(http.paths or ()):
        found.extend(_http_path(entry, index(child(http_path, "paths"), position)))
    return found


def _rules(rules: tuple[IngressRule, ...], path: str, *, allow_wildcard: bool) -> list[FieldError]:
    """``validateIngressRules``: hosts, then each rule's paths (skipped for a stored
    wildcard-host rule that was already invalid)."""
    found: list[FieldError] = []
    for position, rule in enumerate(rules):
        rule_path = index(path, position)
        host = rule.host or ""
        wildcard = False
        if host:
            if parse_ip(host) is not None:
                found.append(errors.invalid(child(rule_path, "host"), host, NOT_AN_IP))
            wildcard = "*" in host
            found.extend(_host_errors(host, child(rule_path, "host")))
        if not wildcard or not allow_wildcard:
            found.extend(_rule_value(rule.http, rule_path))
    return found


def _secret_name_errors(name: str) -> list[str]:
    """``validateTLSSecretName``: empty is fine, else a Secret name (a DNS subdomain)."""
    return name_is_dns_subdomain(name) if name else []


def _spec(spec: IngressSpec, *, allow_secret: bool, allow_wildcard: bool) -> list[FieldError]:
    """``ValidateIngressSpec``."""
    found: list[FieldError] = []
    if not spec.rules and spec.default_backend is None:
        # The bad value is the rules slice, which v1.32's ErrorBody prints with %#v.
        rules = GoValue(
            "[]networking.IngressRule(nil)" if spec.rules is None else "[]networking.IngressRule{}"
        )
        found.append(
            errors.invalid("spec", rules, "either `defaultBackend` or `rules` must be specified")
        )
    if spec.default_backend is not None:
        found.extend(_backend(spec.default_backend, "spec.defaultBackend"))
    if spec.rules:
        found.extend(_rules(spec.rules, "spec.rules", allow_wildcard=allow_wildcard))
    for tls_index, tls in enumerate(spec.tls or ()):
        tls_path = index("spec.tls", tls_index)
        for host_index, host in enumerate(tls.hosts or ()):
            found.extend(_host_errors(host, index(child(tls_path, "hosts"), host_index)))
        if not allow_secret:
            secret = tls.secret_name or ""
            found.extend(
                errors.invalid(child(tls_path, "secretName"), secret, message)
                for message in _secret_name_errors(secret)
            )
    if spec.ingress_class_name is not None:
        found.extend(
            errors.invalid("spec.ingressClassName", spec.ingress_class_name, message)
            for message in name_is_dns_subdomain(spec.ingress_class_name)
        )
    return found


def validate_ingress(ingress: Ingress) -> list[FieldError]:
    """``ValidateIngressCreate`` beyond metadata."""
    spec = ingress.spec or IngressSpec()
    found = _spec(spec, allow_secret=False, allow_wildcard=False)
    annotations = ingress.metadata.annotations or {}
    annotation = annotations.get(INGRESS_CLASS_ANNOTATION)
    if (
        annotation is not None
        and spec.ingress_class_name is not None
        and annotation != spec.ingress_class_name
    ):
        found.append(
            errors.invalid(
                f"annotations.{INGRESS_CLASS_ANNOTATION}",
                annotation,
                "must match `ingressClassName` when both are specified",
            )
        )
    return found


def _stored_invalid_wildcard_rule(old: Ingress) -> bool:
    """``allowInvalidWildcardHostRule``: a stored wildcard-host rule with invalid paths."""
    rules = old.spec.rules if old.spec is not None else None
    return any("*" in (rule.host or "") and _rule_value(rule.http, "") for rule in rules or ())


def _stored_invalid_secret_name(old: Ingress) -> bool:
    """``allowInvalidSecretName``: a stored TLS entry names an invalid Secret."""
    tls = old.spec.tls if old.spec is not None else None
    return any(_secret_name_errors(entry.secret_name or "") for entry in tls or ())


def validate_ingress_update(new: Ingress, old: Ingress) -> list[FieldError]:
    """``ValidateIngressUpdate`` beyond metadata (no annotation check on update)."""
    return _spec(
        new.spec or IngressSpec(),
        allow_secret=_stored_invalid_secret_name(old),
        allow_wildcard=_stored_invalid_wildcard_rule(old),
    )


def validate_ingress_status_update(new: Ingress, old: Ingress) -> list[FieldError]:
    """``ValidateIngressStatusUpdate`` (v1.32): each load-balancer entry's IP (as
    ``IsValidIP`` then parsed it, leading zeros allowed) and host name."""
    status = new.status or IngressStatus()
    entries = status.load_balancer.ingress if status.load_balancer is not None else None
    found: list[FieldError] = []
    for position, entry in enumerate(entries or ()):
        entry_path = index("status.loadBalancer.ingress", position)
        if entry.ip:
            found.extend(ip_errors(entry.ip, child(entry_path, "ip")))
        if entry.hostname:
            host_path = child(entry_path, "hostname")
            found.extend(
                errors.invalid(host_path, entry.hostname, message)
                for message in dns1123_subdomain_errors(entry.hostname)
            )
            if parse_ip(entry.hostname) is not None:
                found.append(errors.invalid(host_path, entry.hostname, NOT_AN_IP))
    return found


# --- IngressClass ------------------------------------------------------------------------------


def domain_prefixed_path_errors(value: str, path: str) -> list[FieldError]:
    """``IsDomainPrefixedPath``: ``<DNS subdomain>/<HTTP path>``."""
    if not value:
        return [errors.required(path)]
    host, slash, rest = value.partition("/")
    if not slash or not host or not rest:
        return [
            errors.invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')
        ]
    found = [errors.invalid(path, host, message) for message in dns1123_subdomain_errors(host)]
    if not _HTTP_PATH.fullmatch(rest):
        found.append(
            errors.invalid(
                path, rest, f"Invalid path (regex used for validation is '{_HTTP_PATH_FMT}')"
            )
        )
    return found


def _parameters(params: IngressClassParametersReference, path: str) -> list[FieldError]:
    """``validateIngressClassParametersReference``."""
    found = _group_kind_name(params.api_group, params.kind, params.name, path)
    if params.scope is None:
        found.append(errors.required(child(path, "scope")))
        return found
    if params.scope not in PARAMETER_SCOPES:
        found.append(errors.not_supported(child(path, "scope"), params.scope, PARAMETER_SCOPES))
        return found
    if params.scope == SCOPE_NAMESPACE:
        if params.namespace is None:
            found.append(
                errors.required(
                    child(path, "namespace"), "`parameters.scope` is set to 'Namespace'"
                )
            )
        else:
            found.extend(
                errors.invalid(child(path, "namespace"), params.namespace, message)
                for message in name_is_dns_label(params.namespace)
            )
    if params.scope == SCOPE_CLUSTER and params.namespace is not None:
        found.append(
            errors.forbidden(child(path, "namespace"), "`parameters.scope` is set to 'Cluster'")
        )
    return found


def validate_ingress_class(ingress_class: IngressClass) -> list[FieldError]:
    """``ValidateIngressClass`` beyond metadata (``validateIngressClassSpec``)."""
    spec = ingress_class.spec
    controller = (spec.controller if spec is not None else None) or ""
    found: list[FieldError] = []
    if not controller:
        found.append(errors.required("spec.controller"))
    else:
        if len(controller.encode()) > MAX_CONTROLLER_LENGTH:
            found.append(errors.too_long("spec.controller", MAX_CONTROLLER_LENGTH))
        found.extend(domain_prefixed_path_errors(controller, "spec.controller"))
    if spec is not None and spec.parameters is not None:
        found.extend(_parameters(spec.parameters, "spec.parameters"))
    return found


def validate_ingress_class_update(new: IngressClass, old: IngressClass) -> list[FieldError]:
    """``ValidateIngressClassUpdate`` beyond metadata: the controller is immutable, then
    the create rules."""
    new_controller = new.spec.controller if new.spec is not None else None
    old_controller = old.spec.controller if old.spec is not None else None
    found = validate_immutable(new_controller or "", old_controller or "", "spec.controller")
    found.extend(validate_ingress_class(new))
    return found


CREATE: Final[dict[type[Any], KindValidator]] = {
    Ingress: validate_ingress,
    IngressClass: validate_ingress_class,
}
UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    Ingress: validate_ingress_update,
    IngressClass: validate_ingress_class_update,
}
STATUS_UPDATE: Final[dict[type[Any], KindUpdateValidator]] = {
    Ingress: validate_ingress_status_update,
}
