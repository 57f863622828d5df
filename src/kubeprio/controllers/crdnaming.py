"""The CRD naming and establishing controller: a CRD's ``NamesAccepted`` and ``Established``.

Mirrors v1.32's ``apiextensions-apiserver/pkg/controller/status/naming_controller.go``
(``calculateNamesAndConditions``) and ``pkg/controller/establish/establishing_controller.go``:

* a CRD's names are compared with the accepted names of the other CRDs of its group: a
  plural, singular, short name, kind or list kind another CRD already uses is a conflict
  (``NamesAccepted=False``, reasons ``PluralConflict``, ``SingularConflict``,
  ``ShortNamesConflict``, ``KindConflict``, ``ListKindConflict``, message ``"<name>" is
  already in use``); otherwise the names are accepted (``status.acceptedNames`` = the spec's
  names; ``NamesAccepted=True``, ``NoConflicts``, ``no conflicts found``);
* a CRD whose names were accepted becomes ``Established=True`` (``InitialNamesAccepted``,
  ``the initial names have been accepted``); from then on its resources are served
  (``apiserver.customresources``). Upstream's two controllers take two status writes; the
  outcome is the same, so one write sets both. A CRD that never had its names accepted is
  ``Established=False`` (``NotAccepted``, ``not all names are accepted``).

Every CRD of the group is queued when one changes (a deleted CRD frees its names).
Serve wires it (``serve.server``). Must not import ``apiserver``, ``store``, ``admission``.
"""

from __future__ import annotations

import random
from typing import Final

from kubeprio.api.apiextensions import (
    ESTABLISHED,
    NAMES_ACCEPTED,
    CustomResourceDefinition,
    CustomResourceDefinitionNames,
    CustomResourceDefinitionStatus,
    condition,
)
from kubeprio.api.meta import ApiObject, Condition
from kubeprio.api.model import evolve
from kubeprio.client import record
from kubeprio.client.informer import FuncHandler, Informer
from kubeprio.client.protocol import Client
from kubeprio.clock import Clock, rfc3339
from kubeprio.controllers.base import Controller

NO_CONFLICTS: Final = ("NoConflicts", "no conflicts found")
INITIAL_NAMES_ACCEPTED: Final = ("InitialNamesAccepted", "the initial names have been accepted")
NOT_ACCEPTED: Final = ("NotAccepted", "not all names are accepted")


def _group(crd: CustomResourceDefinition) -> str:
    return (crd.spec.group if crd.spec is not None else None) or ""


def _names(crd: CustomResourceDefinition) -> CustomResourceDefinitionNames:
    spec = crd.spec
    return (spec.names if spec is not None else None) or CustomResourceDefinitionNames()


def _accepted(crd: CustomResourceDefinition) -> CustomResourceDefinitionNames:
    status = crd.status
    return (
        status.accepted_names if status is not None else None
    ) or CustomResourceDefinitionNames()


def names_conflict(
    crd: CustomResourceDefinition, others: list[CustomResourceDefinition]
) -> tuple[str, str] | None:
    """The first (reason, message) that stops ``crd``'s names being accepted, or None."""
    names = _names(crd)
    plurals: set[str] = set()
    singulars: set[str] = set()
    shorts: set[str] = set()
    kinds: set[str] = set()
    list_kinds: set[str] = set()
    for other in others:
        accepted = _accepted(other)
        # A short name or a singular blocks every other name use too (upstream's
        # getAcceptedNamesForGroup adds each into one set per category).
        plurals.add(accepted.plural or "")
        singulars.add(accepted.singular or "")
        shorts.update(accepted.short_names or ())
        kinds.add(accepted.kind or "")
        list_kinds.add(accepted.list_kind or "")
    for reason, value, taken in (
        ("PluralConflict", names.plural, plurals | singulars | shorts),
        ("SingularConflict", names.singular, plurals | singulars | shorts),
    ):
        if value and value in taken:
            return reason, f'"{value}" is already in use'
    for short in names.short_names or ():
        if short in plurals | singulars | shorts:
            return "ShortNamesConflict", f'"{short}" is already in use'
    for reason, value, taken in (
        ("KindConflict", names.kind, kinds | list_kinds),
        ("ListKindConflict", names.list_kind, kinds | list_kinds),
    ):
        if value and value in taken:
            return reason, f'"{value}" is already in use'
    return None


class CrdNamingController(Controller):
    """Sets ``status.acceptedNames`` and the ``NamesAccepted``/``Established`` conditions."""

    name = "crd-naming-controller"

    def __init__(
        self,
        client: Client,
        *,
        clock: Clock,
        rng: random.Random,
        crds: Informer[CustomResourceDefinition],
        recorder: record.EventRecorder | None = None,
    ) -> None:
        super().__init__(client, clock=clock, rng=rng, recorder=recorder)
        self.crds = crds
        crds.add_handler(
            FuncHandler(
                on_add=self._queue_group,
                on_update=lambda _old, crd: self._queue_group(crd),
                on_delete=self._queue_group,
            )
        )

    def _queue_group(self, crd: CustomResourceDefinition) -> None:
        group = _group(crd)
        for other in self.crds.list():
            if _group(other) == group:
                self.queue.add(other.metadata.name or "")

    def event_target(self, key: str) -> ApiObject | None:
        """The CRD."""
        return self.crds.get(key)

    def reconcile(self, key: str) -> None:
        """``sync``: compute the accepted names and conditions; write them if they changed."""
        crd = self.crds.get(key)
        if crd is None or crd.metadata.deletion_timestamp:
            return
        group = _group(crd)
        others = [
            other
            for other in self.crds.list()
            if _group(other) == group and other.metadata.name != crd.metadata.name
        ]
        conflict = names_conflict(crd, others)
        status = crd.status or CustomResourceDefinitionStatus()
        accepted = status.accepted_names
        if conflict is None:
            accepted = _names(crd)
            names_condition = self._condition(crd, NAMES_ACCEPTED, "True", NO_CONFLICTS)
        else:
            names_condition = self._condition(crd, NAMES_ACCEPTED, "False", conflict)
        established = condition(crd, ESTABLISHED)
        if established is not None and established.status == "True":
            established_condition = established
        elif conflict is None:
            established_condition = self._condition(
                crd, ESTABLISHED, "True", INITIAL_NAMES_ACCEPTED
            )
        else:
            established_condition = self._condition(crd, ESTABLISHED, "False", NOT_ACCEPTED)
        others_conditions = tuple(
            c for c in status.conditions or () if c.type not in (NAMES_ACCEPTED, ESTABLISHED)
        )
        desired = evolve(
            status,
            accepted_names=accepted,
            conditions=(names_condition, established_condition, *others_conditions),
        )
        if desired == status:
            return
        self.client.update_status(evolve(crd, status=desired))

    def _condition(
        self, crd: CustomResourceDefinition, kind: str, value: str, why: tuple[str, str]
    ) -> Condition:
        """The condition, keeping its transition time when its status does not change."""
        reason, message = why
        current = condition(crd, kind)
        if current is not None and current.status == value:
            if current.reason == reason and current.message == message:
                return current
            return evolve(current, reason=reason, message=message)
        return Condition(
            type=kind,
            status=value,
            last_transition_time=rfc3339(self.clock.now()),
            reason=reason,
            message=message,
        )
