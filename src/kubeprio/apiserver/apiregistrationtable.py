"""The field table of apiregistration.k8s.io/v1 APIService, in ``upstreamtable``'s notation.

APIService is upstream's but lives in k8s.io/kube-aggregator, outside the k8s.io/api
mirror that ``tools/gen_upstream_fields.py`` cuts its table to, so its types are written
here from v1.32's ``kube-aggregator/pkg/apis/apiregistration/v1/types.go`` (JSON names,
and the fields without ``omitempty`` as required). ``upstreamtable.served`` merges them in,
which gives APIService strict field validation and an OpenAPI schema for ``kubectl
explain``. Pure data.
"""

from __future__ import annotations

from typing import Any, Final

_SCHEMA: Final = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1."

APIREGISTRATION_ROOTS: Final[dict[str, str]] = {"APIService": "V1APIService"}
APIREGISTRATION_TYPES: Final[dict[str, Any]] = {
    "V1APIService": {
        "schema": _SCHEMA + "APIService",
        "required": [],
        "fields": {
            "apiVersion": "string",
            "kind": "string",
            "metadata": "V1ObjectMeta",
            "spec": "V1APIServiceSpec",
            "status": "V1APIServiceStatus",
        },
    },
    "V1APIServiceSpec": {
        "schema": _SCHEMA + "APIServiceSpec",
        "required": ["groupPriorityMinimum", "versionPriority"],
        "fields": {
            "caBundle": "byte",
            "group": "string",
            "groupPriorityMinimum": "integer",
            "insecureSkipTLSVerify": "boolean",
            "service": "ApiregistrationV1ServiceReference",
            "version": "string",
            "versionPriority": "integer",
        },
    },
    "ApiregistrationV1ServiceReference": {
        "schema": _SCHEMA + "ServiceReference",
        "required": [],
        "fields": {"name": "string", "namespace": "string", "port": "integer"},
    },
    "V1APIServiceStatus": {
        "schema": _SCHEMA + "APIServiceStatus",
        "required": [],
        "fields": {"conditions": "[]V1APIServiceCondition"},
    },
    "V1APIServiceCondition": {
        "schema": _SCHEMA + "APIServiceCondition",
        "required": ["status", "type"],
        "fields": {
            "lastTransitionTime": "date-time",
            "message": "string",
            "reason": "string",
            "status": "string",
            "type": "string",
        },
    },
}
