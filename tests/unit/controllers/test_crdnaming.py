"""The CRD naming controller's conflict rule (v1.32
``apiextensions-apiserver/pkg/controller/status/naming_controller.go``,
``calculateNamesAndConditions``): a name another CRD of the group has accepted is refused
with ``<Name>Conflict`` and ``"<name>" is already in use``; no conflict is accepted."""

from __future__ import annotations

import pytest

from kubeprio.api.apiextensions import (
    CustomResourceDefinition,
    CustomResourceDefinitionNames,
    CustomResourceDefinitionSpec,
    CustomResourceDefinitionStatus,
)
from kubeprio.api.meta import ObjectMeta
from kubeprio.controllers.crdnaming import names_conflict


def _crd(
    plural: str, kind: str, short: tuple[str, ...] = (), accepted: bool = False
) -> CustomResourceDefinition:
    names = CustomResourceDefinitionNames(
        plural=plural, singular=plural[:-1], kind=kind, list_kind=f"{kind}List", short_names=short
    )
    return CustomResourceDefinition(
        metadata=ObjectMeta(name=f"{plural}.example.com"),
        spec=CustomResourceDefinitionSpec(group="example.com", names=names),
        status=CustomResourceDefinitionStatus(accepted_names=names if accepted else None),
    )


@pytest.mark.parametrize(
    ("crd", "expected"),
    [
        (_crd("gizmos", "Gizmo"), None),
        (_crd("widgets", "Gizmo"), ("PluralConflict", '"widgets" is already in use')),
        (_crd("gizmos", "Widget"), ("KindConflict", '"Widget" is already in use')),
        (_crd("gizmos", "Gizmo", ("wd",)), ("ShortNamesConflict", '"wd" is already in use')),
    ],
)
def test_names_conflict(crd, expected):
    existing = _crd("widgets", "Widget", ("wd",), accepted=True)
    assert names_conflict(crd, [existing]) == expected
