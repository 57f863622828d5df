"""The Table of APIServices (``kubectl get apiservices``): NAME SERVICE AVAILABLE AGE.

Mirrors v1.32 ``k8s.io/kube-aggregator/pkg/registry/apiservice/etcd/etcd.go``
(``REST.ConvertToTable``): SERVICE is ``Local`` for a group/version the API server serves
itself, else ``<namespace>/<name>``; AVAILABLE is the ``Available`` condition's status
(``Unknown`` without one), followed by its reason in parentheses when it is not ``True``
(``False (ServiceNotFound)``). Who drives it: ``apiserver.tables``. Pure.
"""

from __future__ import annotations

from typing import Final

from kubeprio.api.apiregistration import APIService, available_condition
from kubeprio.apiserver.tableformat import (
    Cells,
    Column,
    RowConditions,
    age_column,
    name_column,
    since,
)

API_SERVICE_COLUMNS: Final = (
    name_column(),
    Column("Service", "string", "The reference to the service that hosts this API endpoint."),
    Column("Available", "string", "Whether this service is available."),
    age_column(),
)


def service_cell(api_service: APIService) -> str:
    """``Local``, or the aggregated server's ``namespace/name``."""
    service = api_service.spec.service if api_service.spec else None
    if service is None:
        return "Local"
    return f"{service.namespace or ''}/{service.name or ''}"


def available_cell(api_service: APIService) -> str:
    """The Available condition as the table convertor prints it."""
    condition = available_condition(api_service)
    if condition is None:
        return "Unknown"
    status = condition.status or ""
    if status != "True" and condition.reason:
        return f"{status} ({condition.reason})"
    return status


def print_api_service(api_service: APIService, now: float) -> tuple[Cells, RowConditions]:
    """One row: name, service, availability, age."""
    return [
        api_service.metadata.name or "",
        service_cell(api_service),
        available_cell(api_service),
        since(api_service.metadata.creation_timestamp, now),
    ], None
