"""Defaulting of CustomResourceDefinitions (apiextensions.k8s.io/v1).

Mirrors v1.32 ``apiextensions-apiserver/pkg/apis/apiextensions/v1/defaults.go``:
``SetDefaults_CustomResourceDefinitionSpec`` fills ``spec.names.singular`` (the kind in
lower case) and ``spec.names.listKind`` (``<kind>List``) when they are empty and sets
``spec.conversion`` to ``{strategy: None}`` when absent; ``SetDefaults_ServiceReference``
gives a conversion webhook's service port 443. Without these a CRD written without
``listKind`` (the usual manifest, and every typed client's) failed validation with
``spec.names.listKind: Required value``. Called by ``api.defaults.default_object``;
idempotent. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api.apiextensions import CustomResourceDefinition
from kubeprio.api.model import JsonDict, evolve

NONE_CONVERTER: Final = "None"
WEBHOOK_SERVICE_PORT: Final = 443


def _default_conversion(conversion: JsonDict | None) -> JsonDict:
    if conversion is None:
        return {"strategy": NONE_CONVERTER}
    webhook = conversion.get("webhook")
    if not isinstance(webhook, dict):
        return conversion
    client_config = webhook.get("clientConfig")
    if not isinstance(client_config, dict):
        return conversion
    service = client_config.get("service")
    if not isinstance(service, dict) or service.get("port") is not None:
        return conversion
    service = {**service, "port": WEBHOOK_SERVICE_PORT}
    return {
        **conversion,
        "webhook": {**webhook, "clientConfig": {**client_config, "service": service}},
    }


def default_custom_resource_definition(crd: CustomResourceDefinition) -> CustomResourceDefinition:
    """``crd`` with v1's defaults applied."""
    spec = crd.spec
    if spec is None:
        return crd
    changes: dict[str, Any] = {}
    names = spec.names
    if names is not None and names.kind:
        name_changes: dict[str, Any] = {}
        if not names.singular:
            name_changes["singular"] = names.kind.lower()
        if not names.list_kind:
            name_changes["list_kind"] = f"{names.kind}List"
        if name_changes:
            changes["names"] = evolve(names, **name_changes)
    conversion = _default_conversion(spec.conversion)
    if conversion != spec.conversion:
        changes["conversion"] = conversion
    return evolve(crd, spec=evolve(spec, **changes)) if changes else crd
