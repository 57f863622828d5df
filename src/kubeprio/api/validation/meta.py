"""Object-metadata validation and the name, label and selector rules every kind shares.

Mirrors upstream ``ValidateObjectMeta``/``ValidateObjectMetaUpdate``
(``staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go``), the label and
selector checks of ``apimachinery/pkg/apis/meta/v1/validation`` (``ValidateLabels``,
``ValidateLabelName``, ``ValidateLabelSelector``) and the DNS-1123 name checks of
``pkg/util/validation``. Label keys and values are checked by ``api.selectors``
(``validate_label_key``/``validate_label_value``), the one implementation of
``IsQualifiedName``/``IsValidLabelValue``.

Go iterates maps in random order; we report map entries sorted by key so that the
same input always gives the same error list. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from kubeprio.api import errors, gotext, selectors
from kubeprio.api.errors import FieldError
from kubeprio.api.gosyntax import GoSlice, GoStruct, string_map, string_slice
from kubeprio.api.kinds import ResourceInfo
from kubeprio.api.meta import LabelSelector, ObjectMeta

KindValidator = Callable[[Any], list[FieldError]]
"""Validates a new object of one kind (beyond metadata)."""
KindUpdateValidator = Callable[[Any, Any], list[FieldError]]
"""Validates an update ``(new, old)`` of one kind (beyond metadata)."""
KindWarnings = Callable[[Any], list[str]]
"""The warnings a write of one kind returns."""
KindUpdateWarnings = Callable[[Any, Any], list[str]]
"""The warnings an update ``(new, old)`` of one kind returns, where they depend on ``old``."""

DNS1123_SUBDOMAIN_MAX_LENGTH: Final = 253
DNS1123_LABEL_MAX_LENGTH: Final = 63
_DNS1123_SUBDOMAIN: Final = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)
_DNS1123_LABEL: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1035_LABEL: Final = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")

DNS1123_SUBDOMAIN_ERROR: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS1123_LABEL_ERROR: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1035_LABEL_ERROR: Final = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
IS_NEGATIVE_ERROR: Final = "must be greater than or equal to 0"
"""``apimachineryvalidation.IsNegativeErrorMsg``."""
FIELD_IMMUTABLE: Final = "field is immutable"
"""``apimachineryvalidation.FieldImmutableErrorMsg``."""
TOTAL_ANNOTATION_SIZE_LIMIT: Final = 256 * (1 << 10)
"""``TotalAnnotationSizeLimitB``: keys plus values, in bytes."""
IN_NOT_IN_VALUES: Final = "must be specified when `operator` is 'In' or 'NotIn'"
EXISTS_NO_VALUES: Final = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
NOT_A_VALID_OPERATOR: Final = "not a valid selector operator"


def dns1123_subdomain_errors(value: str) -> list[str]:
    """``IsDNS1123Subdomain``: messages for an invalid subdomain name."""
    messages: list[str] = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        messages.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} characters")
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        messages.append(DNS1123_SUBDOMAIN_ERROR)
    return messages


def dns1123_label_errors(value: str) -> list[str]:
    """``IsDNS1123Label``: messages for an invalid label name.

    A value that is a valid subdomain but not a label (it has dots) gets upstream's
    shorter ``must not contain dots``.
    """
    messages: list[str] = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        messages.append(f"must be no more than {DNS1123_LABEL_MAX_LENGTH} characters")
    if not _DNS1123_LABEL.fullmatch(value):
        if _DNS1123_SUBDOMAIN.fullmatch(value):
            messages.append("must not contain dots")
        else:
            messages.append(DNS1123_LABEL_ERROR)
    return messages


def dns1035_label_errors(value: str) -> list[str]:
    """``IsDNS1035Label``: messages for an invalid RFC 1035 label (a Service name)."""
    messages: list[str] = []
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        messages.append(f"must be no more than {DNS1123_LABEL_MAX_LENGTH} characters")
    if not _DNS1035_LABEL.fullmatch(value):
        messages.append(DNS1035_LABEL_ERROR)
    return messages


def name_is_dns1035_label(value: str, prefix: bool = False) -> list[str]:
    """``NameIsDNS1035Label`` (``ValidateServiceName``): a generateName prefix may end in ``-``."""
    if prefix:
        value = _mask_trailing_dash(value)
    return dns1035_label_errors(value)


def name_is_dns_subdomain(value: str, prefix: bool = False) -> list[str]:
    """``NameIsDNSSubdomain``: a generateName prefix may end in ``-``."""
    if prefix:
        value = _mask_trailing_dash(value)
    return dns1123_subdomain_errors(value)


def name_is_dns_label(value: str, prefix: bool = False) -> list[str]:
    """``NameIsDNSLabel``: a generateName prefix may end in ``-``."""
    if prefix:
        value = _mask_trailing_dash(value)
    return dns1123_label_errors(value)


def _mask_trailing_dash(name: str) -> str:
    """``maskTrailingDash``: treat ``a-`` as ``aa`` so a generateName prefix passes."""
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


# --- field helpers ---------------------------------------------------------------------------


def child(path: str, name: str) -> str:
    """``Path.Child``: ``spec`` + ``containers`` -> ``spec.containers``."""
    return f"{path}.{name}" if path else name


def index(path: str, position: int) -> str:
    """``Path.Index``: ``spec.containers[0]``."""
    return f"{path}[{position}]"


def key(path: str, name: str) -> str:
    """``Path.Key``: ``resources.limits[cpu]``."""
    return f"{path}[{name}]"


def validate_nonnegative(value: int, path: str) -> list[FieldError]:
    """``ValidateNonnegativeField``: ``Invalid value: -1: must be greater than or equal to 0``."""
    return [errors.invalid(path, value, IS_NEGATIVE_ERROR)] if value < 0 else []


def validate_immutable(
    new: object, old: object, path: str, shown: object = None
) -> list[FieldError]:
    """``ValidateImmutableField``: ``Invalid value: <new>: field is immutable`` when they differ.

    ``shown`` is the bad value as upstream passes it (e.g. a typed ``gosyntax`` value),
    when the Python value would print differently; it defaults to ``new``.
    """
    if new == old:
        return []
    return [errors.invalid(path, new if shown is None else shown, FIELD_IMMUTABLE)]


def qualified_name_errors(value: str, path: str) -> list[FieldError]:
    """``ValidateQualifiedName``: one Invalid per message of ``IsQualifiedName``."""
    return [errors.invalid(path, value, message) for message in selectors.validate_label_key(value)]


# --- labels, annotations, selectors ----------------------------------------------------------


def validate_label_name(name: str, path: str) -> list[FieldError]:
    """``ValidateLabelName``: the key must be a qualified name."""
    return qualified_name_errors(name, path)


def validate_labels(labels: Mapping[str, str] | None, path: str) -> list[FieldError]:
    """``ValidateLabels``: every key a qualified name, every value a valid label value.

    Both kinds of error carry the map's own path (``metadata.labels``), as upstream's do.
    """
    found: list[FieldError] = []
    for label_key in sorted(labels or {}):
        value = (labels or {})[label_key]
        found.extend(validate_label_name(label_key, path))
        found.extend(
            errors.invalid(path, value, message)
            for message in selectors.validate_label_value(value)
        )
    return found


def validate_annotations(annotations: Mapping[str, str] | None, path: str) -> list[FieldError]:
    """``ValidateAnnotations``: keys are qualified names (case-insensitively); 256 KiB in total."""
    found: list[FieldError] = []
    total = 0
    for annotation_key in sorted(annotations or {}):
        found.extend(
            errors.invalid(path, annotation_key, message)
            for message in selectors.validate_label_key(annotation_key.lower())
        )
        value = (annotations or {})[annotation_key]
        total += len(annotation_key.encode()) + len(value.encode())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT:
        found.append(errors.too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT))
    return found


def label_selector_value(selector: LabelSelector) -> GoStruct:
    """A ``metav1.LabelSelector`` as a bad value: v1.32 prints it with ``%#v``
    (``v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:
    []v1.LabelSelectorRequirement(nil)}``); an absent list or map is nil, ``{}`` empty."""
    requirements = selector.match_expressions
    expressions = None
    if requirements is not None:
        expressions = [
            GoStruct(
                "v1.LabelSelectorRequirement",
                (
                    ("Key", requirement.key or ""),
                    ("Operator", requirement.operator or ""),
                    ("Values", string_slice(requirement.values)),
                ),
            )
            for requirement in requirements
        ]
    return GoStruct(
        "v1.LabelSelector",
        (
            ("MatchLabels", string_map(selector.match_labels)),
            ("MatchExpressions", GoSlice("[]v1.LabelSelectorRequirement", expressions)),
        ),
    )


def label_selector_json(selector: LabelSelector) -> dict[str, Any]:
    """A ``metav1.LabelSelector``'s JSON form, for a struct that embeds one but cannot be
    printed with ``%#v`` (see :func:`label_selector_value`)."""
    out: dict[str, Any] = {}
    if selector.match_labels:
        out["matchLabels"] = dict(selector.match_labels)
    if selector.match_expressions:
        expressions: list[dict[str, Any]] = []
        for requirement in selector.match_expressions:
            entry: dict[str, Any] = {
                "key": requirement.key or "",
                "operator": requirement.operator or "",
            }
            if requirement.values:
                entry["values"] = list(requirement.values)
            expressions.append(entry)
        out["matchExpressions"] = expressions
    return out


def validate_label_selector(
    selector: LabelSelector | None, path: str, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """``ValidateLabelSelector``: matchLabels as labels, each matchExpression's operator/values."""
    if selector is None:
        return []
    found = validate_labels(selector.match_labels, child(path, "matchLabels"))
    for position, requirement in enumerate(selector.match_expressions or ()):
        req_path = index(child(path, "matchExpressions"), position)
        values = requirement.values or ()
        operator = requirement.operator or ""
        if operator in ("In", "NotIn"):
            if not values:
                found.append(errors.required(child(req_path, "values"), IN_NOT_IN_VALUES))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                found.append(errors.forbidden(child(req_path, "values"), EXISTS_NO_VALUES))
        else:
            found.append(
                errors.invalid(child(req_path, "operator"), operator, NOT_A_VALID_OPERATOR)
            )
        found.extend(validate_label_name(requirement.key or "", child(req_path, "key")))
        if not allow_invalid_label_value:
            for value_index, value in enumerate(values):
                found.extend(
                    errors.invalid(index(child(req_path, "values"), value_index), value, message)
                    for message in selectors.validate_label_value(value)
                )
    return found


def selector_is_empty(selector: LabelSelector | None) -> bool:
    """Whether a selector has neither matchLabels nor matchExpressions."""
    return selector is None or not (selector.match_labels or selector.match_expressions)


# --- object metadata -----------------------------------------------------------------------------


def path_segment_errors(name: str, prefix: bool = False) -> list[str]:
    """``IsValidPathSegmentName``: not ``.``/``..``, no ``/`` or ``%``."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


_NAME_RULES: Final[dict[str, Callable[[str, bool], list[str]]]] = {
    "namespaces": name_is_dns_label,
    "services": name_is_dns1035_label,
    "statefulsets": name_is_dns_label,
    # ValidateRBACName (IsValidPathSegmentName), as in validation.rbac.
    "roles": path_segment_errors,
    "clusterroles": path_segment_errors,
    "rolebindings": path_segment_errors,
    "clusterrolebindings": path_segment_errors,
    # ValidateAPIService: a path segment (and version.group, in validation.apiregistration).
    "apiservices": path_segment_errors,
    # ValidateCertificateRequestName accepts any name.
    "certificatesigningrequests": lambda _name, _prefix: [],
}
"""Kinds whose names are not DNS subdomains (``ValidateNamespaceName``, ``ValidateServiceName``,
``ValidateStatefulSetName``)."""


def validate_object_meta(metadata: ObjectMeta, info: ResourceInfo) -> list[FieldError]:
    """``ValidateObjectMeta`` for the modelled fields: names, namespace scope, labels, annotations."""
    name_fn = _NAME_RULES.get(info.plural, name_is_dns_subdomain)
    found: list[FieldError] = []
    if metadata.generate_name:
        found.extend(
            errors.invalid("metadata.generateName", metadata.generate_name, message)
            for message in name_fn(metadata.generate_name, True)
        )
    name = metadata.name or ""
    if not name:
        found.append(errors.required("metadata.name", "name or generateName is required"))
    else:
        found.extend(
            errors.invalid("metadata.name", name, message) for message in name_fn(name, False)
        )
    if info.namespaced:
        if not metadata.namespace:
            found.append(errors.required("metadata.namespace", ""))
        else:
            found.extend(
                errors.invalid("metadata.namespace", metadata.namespace, message)
                for message in dns1123_label_errors(metadata.namespace)
            )
    elif metadata.namespace:
        found.append(errors.forbidden("metadata.namespace", "not allowed on this type"))
    found.extend(validate_nonnegative(metadata.generation or 0, "metadata.generation"))
    found.extend(validate_labels(metadata.labels, "metadata.labels"))
    found.extend(validate_annotations(metadata.annotations, "metadata.annotations"))
    return found


def validate_object_meta_update(new: ObjectMeta, old: ObjectMeta) -> list[FieldError]:
    """``ValidateObjectMetaUpdate``: immutable identity fields, labels and annotations.

    The resourceVersion check (``must be specified for an update``) is left out: the
    API service fills in the stored version for unconditional updates before
    validating, as upstream's store does for kinds that allow them.
    """
    found: list[FieldError] = []
    if old.deletion_timestamp:
        added = sorted(set(new.finalizers or ()) - set(old.finalizers or ()))
        if added:
            shown = "[]string{" + ", ".join(gotext.go_quote(f) for f in added) + "}"
            found.append(
                errors.forbidden(
                    "metadata.finalizers",
                    f"no new finalizers can be added if the object is being deleted, found new finalizers {shown}",
                )
            )
    if (new.generation or 0) < (old.generation or 0):
        found.append(
            errors.invalid("metadata.generation", new.generation or 0, "must not be decremented")
        )
    for attr, path in (("name", "metadata.name"), ("namespace", "metadata.namespace")):
        found.extend(validate_immutable(getattr(new, attr) or "", getattr(old, attr) or "", path))
    if new.uid and old.uid:
        found.extend(validate_immutable(new.uid, old.uid, "metadata.uid"))
    # Upstream validates both maps on every update. The stored object's maps passed the
    # same rules when they were written, and the rules never change, so maps equal to the
    # stored ones cannot fail: only changed maps are checked (status writes keep them).
    if new.labels != old.labels:
        found.extend(validate_labels(new.labels, "metadata.labels"))
    if new.annotations != old.annotations:
        found.extend(validate_annotations(new.annotations, "metadata.annotations"))
    return found
