"""Server-side Table columns of the RBAC kinds (``kubectl get roles,rolebindings``).

Mirrors ``printRole``, ``printClusterRole``, ``printRoleBinding`` and
``printClusterRoleBinding`` of upstream ``pkg/printers/internalversion/printers.go``:
roles print NAME and CREATED AT (the creation time in UTC, RFC 3339); bindings print
NAME, ROLE (``Kind/name``) and AGE, and with ``-o wide`` USERS, GROUPS and
SERVICEACCOUNTS (``namespace/name``), as ``SubjectsStrings`` splits the subjects. Who
drives it: ``apiserver.tables``. Pure.
"""

from __future__ import annotations

from typing import Any, Final

from kubeprio.api.rbac import GROUP_KIND, SERVICE_ACCOUNT_KIND, USER_KIND, Subject, role_ref_of
from kubeprio.apiserver.tableformat import (
    AGE_DOC,
    Cells,
    Column,
    RowConditions,
    age_column,
    name_column,
    since,
)
from kubeprio.clock import parse_rfc3339, rfc3339

ROLE_COLUMNS: Final = (name_column(), Column("Created At", "date", AGE_DOC))


def print_role(role: Any, now: float) -> tuple[Cells, RowConditions]:
    """``printRole``/``printClusterRole``: NAME and CREATED AT."""
    created = role.metadata.creation_timestamp
    return [
        role.metadata.name or "",
        rfc3339(parse_rfc3339(created)) if created else "0001-01-01T00:00:00Z",
    ], None


def _binding_columns(role_doc: str) -> tuple[Column, ...]:
    return (
        name_column(),
        Column("Role", "string", role_doc),
        age_column(),
        Column("Users", "string", "Users in the roleBinding", priority=1),
        Column("Groups", "string", "Groups in the roleBinding", priority=1),
        Column("ServiceAccounts", "string", "ServiceAccounts in the roleBinding", priority=1),
    )


ROLE_BINDING_COLUMNS: Final = _binding_columns(
    "roleRef can reference a Role in the current namespace or a ClusterRole in the global "
    "namespace. If the RoleRef cannot be resolved, the Authorizer must return an error."
)
CLUSTER_ROLE_BINDING_COLUMNS: Final = _binding_columns(
    "roleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot "
    "be resolved, the Authorizer must return an error."
)


def subjects_strings(
    subjects: tuple[Subject, ...] | None,
) -> tuple[list[str], list[str], list[str]]:
    """``SubjectsStrings``: users, groups and ``namespace/name`` service accounts."""
    users: list[str] = []
    groups: list[str] = []
    accounts: list[str] = []
    for subject in subjects or ():
        if subject.kind == SERVICE_ACCOUNT_KIND:
            accounts.append(f"{subject.namespace or ''}/{subject.name or ''}")
        elif subject.kind == USER_KIND:
            users.append(subject.name or "")
        elif subject.kind == GROUP_KIND:
            groups.append(subject.name or "")
    return users, groups, accounts


def print_binding(binding: Any, now: float) -> tuple[Cells, RowConditions]:
    """``printRoleBinding``/``printClusterRoleBinding`` (wide form)."""
    ref = role_ref_of(binding)
    users, groups, accounts = subjects_strings(binding.subjects)
    return [
        binding.metadata.name or "",
        f"{ref.kind or ''}/{ref.name or ''}",
        since(binding.metadata.creation_timestamp, now),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(accounts),
    ], None
