"""CustomResourceDefinition validation (apiextensions.k8s.io/v1).

Mirrors v1.32's ``apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go``:

* ``ValidateCustomResourceDefinition``: the name must be ``<plural>.<group>``
  (``must be spec.names.plural+"."+spec.group``); ``validateCustomResourceDefinitionSpec``:
  group (a DNS subdomain with at least one dot), scope (``Cluster``/``Namespaced``),
  every version a DNS-1035 label with a schema (``schemas are required``), unique
  version names and exactly one storage version, the four required names and
  ``ValidateCustomResourceDefinitionNames`` (DNS-1035 labels, kind != listKind);
  ``ValidateCustomResourceDefinitionSubresources`` (scale paths) and
  ``ValidateCustomResourceColumnDefinition`` (printer columns);
  ``ValidateCustomResourceDefinitionStoredVersions``.
* ``ValidateCustomResourceDefinitionUpdate``: the same, plus ``spec.scope`` immutable
  and ``status.storedVersions`` still listing the storage version.

The structural-schema rules of the version schemas are ``api.crdschema``'s. Bad values
that upstream prints with Go's ``%#v`` of internal structs (the whole ``spec.versions``
list) are printed as JSON here: their pointers' addresses cannot be reproduced anyway.
CEL rules (``x-kubernetes-validations``) are checked and compiled by
``api.validation.crdrules`` (when the schema is structural). Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api import errors
from kubeprio.api.apiextensions import (
    CLUSTER_SCOPED,
    NAMESPACE_SCOPED,
    CustomResourceColumnDefinition,
    CustomResourceDefinition,
    CustomResourceDefinitionNames,
    CustomResourceDefinitionSpec,
    CustomResourceDefinitionVersion,
    CustomResourceSubresources,
)
from kubeprio.api.crdschema import validate_structural
from kubeprio.api.errors import FieldError, GoValue, go_json
from kubeprio.api.serialization import to_sparse_dict
from kubeprio.api.validation.crdrules import validate_spec_rules
from kubeprio.api.validation.meta import (
    KindUpdateValidator,
    KindValidator,
    dns1035_label_errors,
    dns1123_subdomain_errors,
    validate_immutable,
)

PRINTER_COLUMN_TYPES: Final = ("boolean", "date", "integer", "number", "string")
"""``printerColumnDatatypes``, sorted as ``sets.String.List`` returns them."""
PRINTER_COLUMN_FORMATS: Final = (
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
)
"""``customResourceColumnDefinitionFormats``, sorted."""


def _versions_value(spec: CustomResourceDefinitionSpec) -> GoValue:
    return GoValue(go_json([to_sparse_dict(v) for v in spec.versions or ()], sort_keys=False))


def validate_custom_resource_definition(crd: CustomResourceDefinition) -> list[FieldError]:
    """``ValidateCustomResourceDefinition`` (the object metadata is checked by the caller)."""
    spec = crd.spec or CustomResourceDefinitionSpec()
    names = spec.names or CustomResourceDefinitionNames()
    found: list[FieldError] = []
    name = crd.metadata.name or ""
    if name and name != f"{names.plural or ''}.{spec.group or ''}":
        found.append(
            errors.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group')
        )
    found.extend(validate_spec(spec))
    status = crd.status
    if status is not None and status.accepted_names is not None:
        found.extend(validate_names(status.accepted_names, "status.acceptedNames"))
    found.extend(validate_stored_versions(crd))
    return found


def validate_spec(spec: CustomResourceDefinitionSpec) -> list[FieldError]:
    """``validateCustomResourceDefinitionSpec`` without the CEL and defaults-pruning checks."""
    found: list[FieldError] = []
    group = spec.group or ""
    if not group:
        found.append(errors.required("spec.group"))
    elif messages := dns1123_subdomain_errors(group):
        found.append(errors.invalid("spec.group", group, ",".join(messages)))
    elif len(group.split(".")) < 2:
        found.append(
            errors.invalid("spec.group", group, "should be a domain with at least one dot")
        )
    scope = spec.scope or ""
    if not scope:
        found.append(errors.required("spec.scope"))
    elif scope not in (CLUSTER_SCOPED, NAMESPACE_SCOPED):
        found.append(errors.not_supported("spec.scope", scope, (CLUSTER_SCOPED, NAMESPACE_SCOPED)))
    versions = spec.versions or ()
    for i, version in enumerate(versions):
        schema = version.schema.open_apiv3_schema if version.schema is not None else None
        if schema is None:
            found.append(
                errors.required(
                    f"spec.versions[{i}].schema.openAPIV3Schema", "schemas are required"
                )
            )
    if spec.preserve_unknown_fields and _has_defaults(spec):
        found.append(
            errors.invalid(
                "spec.preserveUnknownFields",
                True,
                "must be false in order to use defaults in the schema",
            )
        )
    storage_count = 0
    seen: set[str] = set()
    unique = True
    for i, version in enumerate(versions):
        path = f"spec.versions[{i}]"
        if version.storage:
            storage_count += 1
        version_name = version.name or ""
        if version_name in seen:
            unique = False
        seen.add(version_name)
        if messages := dns1035_label_errors(version_name):
            found.append(errors.invalid(f"{path}.name", version_name, ",".join(messages)))
        found.extend(_validate_version(version, path))
    if not unique:
        found.append(
            errors.invalid(
                "spec.versions", _versions_value(spec), "must contain unique version names"
            )
        )
    if storage_count != 1:
        found.append(
            errors.invalid(
                "spec.versions",
                _versions_value(spec),
                "must have exactly one version marked as storage version",
            )
        )
    found.extend(validate_spec_rules(spec))
    names = spec.names or CustomResourceDefinitionNames()
    for field, value in (
        ("plural", names.plural),
        ("singular", names.singular),
        ("kind", names.kind),
        ("listKind", names.list_kind),
    ):
        if not value:
            found.append(errors.required(f"spec.names.{field}"))
    found.extend(validate_names(names, "spec.names"))
    return found


def _has_defaults(spec: CustomResourceDefinitionSpec) -> bool:
    def walk(node: object) -> bool:
        if isinstance(node, dict):
            if "default" in node and isinstance(node.get("type", ""), str):
                return True
            return any(walk(child) for child in node.values())
        if isinstance(node, list):
            return any(walk(child) for child in node)
        return False

    return any(
        walk(v.schema.open_apiv3_schema)
        for v in spec.versions or ()
        if v.schema is not None and v.schema.open_apiv3_schema is not None
    )


def _validate_version(version: CustomResourceDefinitionVersion, path: str) -> list[FieldError]:
    """``validateCustomResourceDefinitionVersion``."""
    found: list[FieldError] = []
    warning = version.deprecation_warning
    if warning is not None:
        messages: list[str] = []
        if not version.deprecated:
            messages.append("can only be set for deprecated versions")
        else:
            if len(warning.encode()) > 256:
                messages.append("must be <= 256 characters long")
            if not warning:
                messages.append("must not be an empty string")
        found.extend(errors.invalid(f"{path}.deprecationWarning", warning, m) for m in messages)
    subresources = version.subresources
    schema = version.schema.open_apiv3_schema if version.schema is not None else None
    if schema is not None:
        status_enabled = subresources is not None and subresources.status is not None
        found.extend(_validate_root_schema(schema, f"{path}.schema", status_enabled))
    found.extend(validate_subresources(subresources, f"{path}.subresources"))
    for i, column in enumerate(version.additional_printer_columns or ()):
        found.extend(validate_column(column, f"{path}.additionalPrinterColumns[{i}]"))
    return found


_ROOT_FIELDS_WITH_STATUS: Final = frozenset(
    {"description", "type", "required", "properties", "x-kubernetes-preserve-unknown-fields",
     "x-kubernetes-validations", "x-kubernetes-map-type"}
)  # fmt: skip
"""``allowedFieldsAtRootSchema`` (by JSON name): what a root schema may hold when the
status subresource is enabled (the status schema is taken as ``properties.status``)."""


def _validate_root_schema(schema: dict[str, object], path: str, status: bool) -> list[FieldError]:
    found: list[FieldError] = []
    root = f"{path}.openAPIV3Schema"
    if status:
        if "type" in schema and schema["type"] != "object":
            found.append(
                errors.invalid(
                    f"{root}.type",
                    schema["type"],
                    'only "object" is allowed as the type at the root of the schema if the status '
                    "subresource is enabled",
                )
            )
        elif any(key not in _ROOT_FIELDS_WITH_STATUS for key in schema):
            found.append(
                errors.invalid(
                    root,
                    GoValue(go_json(schema)),
                    "only [Description Type Required Properties XPreserveUnknownFields "
                    "XValidations XMapType] fields are allowed at the root of the schema if the "
                    "status subresource is enabled",
                )
            )
    if schema.get("nullable") is True:
        found.append(errors.forbidden(f"{root}.nullable", "nullable cannot be true at the root"))
    found.extend(validate_structural(schema, root))
    return found


def validate_subresources(
    subresources: CustomResourceSubresources | None, path: str
) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionSubresources``: the scale subresource's paths."""
    scale = subresources.scale if subresources is not None else None
    if scale is None:
        return []
    found: list[FieldError] = []
    for field, value, prefixes, where in (
        ("specReplicasPath", scale.spec_replicas_path, (".spec.",), ".spec"),
        ("statusReplicasPath", scale.status_replicas_path, (".status.",), ".status"),
    ):
        field_path = f"{path}.scale.{field}"
        if not value:
            found.append(errors.required(field_path))
        elif simple := _simple_json_path_errors(value, field_path):
            found.extend(simple)
        elif not value.startswith(prefixes):
            found.append(errors.invalid(field_path, value, f"should be a json path under {where}"))
    selector = scale.label_selector_path
    if selector:
        field_path = f"{path}.scale.labelSelectorPath"
        if simple := _simple_json_path_errors(selector, field_path):
            found.extend(simple)
        elif not selector.startswith((".spec.", ".status.")):
            found.append(
                errors.invalid(
                    field_path, selector, "should be a json path under either .spec or .status"
                )
            )
    return found


def _simple_json_path_errors(value: str, path: str) -> list[FieldError]:
    """``validateSimpleJSONPath``."""
    if not value:
        return [errors.invalid(path, value, "must not be empty")]
    if not value.startswith("."):
        return [errors.invalid(path, value, "must be a simple json path starting with .")]
    return []


def validate_column(column: CustomResourceColumnDefinition, path: str) -> list[FieldError]:
    """``ValidateCustomResourceColumnDefinition``."""
    found: list[FieldError] = []
    if not column.name:
        found.append(errors.required(f"{path}.name"))
    types = f"must be one of {','.join(PRINTER_COLUMN_TYPES)}"
    if not column.type:
        found.append(errors.required(f"{path}.type", types))
    elif column.type not in PRINTER_COLUMN_TYPES:
        found.append(errors.invalid(f"{path}.type", column.type, types))
    if column.format and column.format not in PRINTER_COLUMN_FORMATS:
        found.append(
            errors.invalid(
                f"{path}.format",
                column.format,
                f"must be one of {','.join(PRINTER_COLUMN_FORMATS)}",
            )
        )
    # Upstream's internal field is JSONPath, so the error names it that way.
    if not column.json_path:
        found.append(errors.required(f"{path}.JSONPath"))
    else:
        found.extend(_simple_json_path_errors(column.json_path, f"{path}.JSONPath"))
    return found


def validate_names(names: CustomResourceDefinitionNames, path: str) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionNames``."""
    found: list[FieldError] = []
    for field, value in (("plural", names.plural), ("singular", names.singular)):
        if value and (messages := dns1035_label_errors(value)):
            found.append(errors.invalid(f"{path}.{field}", value, ",".join(messages)))
    for field, value in (("kind", names.kind), ("listKind", names.list_kind)):
        if value and (messages := dns1035_label_errors(value.lower())):
            found.append(
                errors.invalid(
                    f"{path}.{field}",
                    value,
                    "may have mixed case, but should otherwise match: " + ",".join(messages),
                )
            )
    for i, short in enumerate(names.short_names or ()):
        if messages := dns1035_label_errors(short):
            found.append(errors.invalid(f"{path}.shortNames[{i}]", short, ",".join(messages)))
    if names.kind and names.kind == names.list_kind:
        found.append(
            errors.invalid(
                f"{path}.listKind", names.list_kind, "kind and listKind may not be the same"
            )
        )
    for i, category in enumerate(names.categories or ()):
        if messages := dns1035_label_errors(category):
            found.append(errors.invalid(f"{path}.categories[{i}]", category, ",".join(messages)))
    return found


def validate_stored_versions(crd: CustomResourceDefinition) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionStoredVersions`` (on a CRD that has any: the
    strategy fills them in on create)."""
    stored = crd.status.stored_versions if crd.status is not None else None
    if stored is None:
        return []
    path = "status.storedVersions"
    if not stored:
        return [errors.invalid(path, list(stored), "must have at least one stored version")]
    versions = (crd.spec.versions if crd.spec is not None else None) or ()
    found: list[FieldError] = []
    storage = next((v.name for v in versions if v.storage), None)
    if storage is not None and storage not in stored:
        found.append(errors.invalid(path, list(stored), f"must have the storage version {storage}"))
    declared = {v.name for v in versions}
    for i, name in enumerate(stored):
        if name not in declared:
            found.append(errors.invalid(f"{path}[{i}]", name, "must appear in spec.versions"))
    return found


def validate_custom_resource_definition_update(
    new: CustomResourceDefinition, old: CustomResourceDefinition
) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionUpdate``: the create rules, ``spec.scope`` immutable."""
    found = validate_custom_resource_definition(new)
    new_scope = new.spec.scope if new.spec is not None else None
    old_scope = old.spec.scope if old.spec is not None else None
    found.extend(validate_immutable(new_scope, old_scope, "spec.scope"))
    return found


def validate_custom_resource_definition_status(
    new: CustomResourceDefinition, old: CustomResourceDefinition
) -> list[FieldError]:
    """``ValidateUpdateCustomResourceDefinitionStatus``: the accepted names."""
    status = new.status
    if status is None or status.accepted_names is None:
        return []
    return validate_names(status.accepted_names, "status.acceptedNames")


CREATE: Final[dict[type[object], KindValidator]] = {
    CustomResourceDefinition: validate_custom_resource_definition,
}
UPDATE: Final[dict[type[object], KindUpdateValidator]] = {
    CustomResourceDefinition: validate_custom_resource_definition_update,
}
STATUS: Final[dict[type[object], KindUpdateValidator]] = {
    CustomResourceDefinition: validate_custom_resource_definition_status,
}
