"""The APF bootstrap ensurer: what to create, revise or delete so the stored FlowSchemas and
PriorityLevelConfigurations hold upstream's bootstrap configuration.

Mirrors v1.32's ``pkg/registry/flowcontrol/ensurer`` (run by the
``priority-and-fairness-config-producer`` post-start hook and then every minute):

* every bootstrap object (``api.flowcontrolbootstrap``) that is missing is created;
* a mandatory one (``exempt``, ``catch-all``) always has its spec put back to the
  bootstrap value and ``apf.kubernetes.io/autoupdate-spec`` set to ``"true"``
  (``alwaysAutoUpdateSpec``); for the ``exempt`` level, the admin's values of
  ``spec.exempt`` are kept;
* a suggested one is revised only while it auto-updates: the annotation parses as a
  boolean (Go's ``strconv.ParseBool``) and says so, or, without a parseable annotation,
  its ``generation`` is still 1 (nobody changed its spec); the annotation is then
  written to match that decision;
* an object that is not a bootstrap one but carries the annotation ``"true"`` is
  deleted (``removeUnwantedObjects``); objects without it are the admin's own.

Specs compare as ``SpecEqualish`` does: the defaulted bootstrap spec against the stored
one, semantically (``validation.flowcontrol.semantic``). Pure: ``plan`` returns the
writes; ``apiserver.flowcontrolconfig`` makes them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from kubeprio.api.flowcontrol import (
    AUTOUPDATE_ANNOTATION,
    EXEMPT,
    FlowSchema,
    PriorityLevelConfiguration,
    default_flow_schema,
    default_priority_level,
)
from kubeprio.api.flowcontrolbootstrap import (
    MANDATORY_LEVELS,
    MANDATORY_SCHEMAS,
    SUGGESTED_LEVELS,
    SUGGESTED_SCHEMAS,
)
from kubeprio.api.model import evolve
from kubeprio.api.serialization import to_dict
from kubeprio.api.validation.flowcontrol import semantic

ConfigObject = FlowSchema | PriorityLevelConfiguration

_TRUE: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE: Final = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_bool(value: str | None) -> bool | None:
    """Go's ``strconv.ParseBool``; None when it would fail."""
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return None


@dataclass(frozen=True, slots=True)
class Plan:
    """The writes that bring one kind's stored objects to the bootstrap configuration."""

    create: tuple[ConfigObject, ...] = ()
    update: tuple[ConfigObject, ...] = ()
    delete: tuple[str, ...] = ()


def _annotation(obj: ConfigObject) -> str | None:
    return (obj.metadata.annotations or {}).get(AUTOUPDATE_ANNOTATION)


def should_update_spec(obj: ConfigObject) -> bool:
    """``shouldUpdateSpec``: the annotation's boolean, else whether generation is 1."""
    parsed = parse_bool(_annotation(obj))
    if parsed is not None:
        return parsed
    return obj.metadata.generation == 1


def _defaulted(obj: ConfigObject) -> ConfigObject:
    if isinstance(obj, FlowSchema):
        return default_flow_schema(obj)
    return default_priority_level(obj)


def spec_equalish(bootstrap: ConfigObject, current: ConfigObject) -> bool:
    """``SpecEqualish``: the defaulted bootstrap spec equals the stored one (the exempt
    level's own ``spec.exempt`` values taken from the stored object)."""
    expected: Any = _defaulted(bootstrap).spec
    actual: Any = current.spec
    if isinstance(current, PriorityLevelConfiguration) and current.metadata.name == EXEMPT:
        if actual is None or actual.exempt is None:
            return False
        expected = evolve(expected, exempt=actual.exempt)
    return bool(semantic(to_dict(expected)) == semantic(to_dict(actual)))


def revise(
    bootstrap: ConfigObject, current: ConfigObject, *, mandatory: bool
) -> ConfigObject | None:
    """``ReviseIfNeeded``: the revised object, or None when nothing needs writing."""
    auto_update = mandatory or should_update_spec(current)
    update_annotation = parse_bool(_annotation(current)) is not auto_update
    spec_changed = auto_update and not spec_equalish(bootstrap, current)
    if not (update_annotation or spec_changed):
        return None
    revised: ConfigObject = current
    if spec_changed:
        spec = _defaulted(bootstrap).spec
        if isinstance(current, PriorityLevelConfiguration) and current.metadata.name == EXEMPT:
            spec = evolve(spec, exempt=current.spec.exempt if current.spec else None)
        revised = evolve(revised, spec=spec)
    if update_annotation:
        annotations = dict(current.metadata.annotations or {})
        annotations[AUTOUPDATE_ANNOTATION] = "true" if auto_update else "false"
        revised = evolve(revised, metadata=evolve(current.metadata, annotations=annotations))
    return revised


def plan(
    current: Mapping[str, ConfigObject],
    mandatory: Iterable[ConfigObject],
    suggested: Iterable[ConfigObject],
) -> Plan:
    """The creates, revisions and deletions for one kind (objects by name)."""
    create: list[ConfigObject] = []
    update: list[ConfigObject] = []
    wanted: set[str] = set()
    for is_mandatory, objects in ((True, mandatory), (False, suggested)):
        for bootstrap in objects:
            name = bootstrap.metadata.name or ""
            wanted.add(name)
            stored = current.get(name)
            if stored is None:
                create.append(bootstrap)
                continue
            revised = revise(bootstrap, stored, mandatory=is_mandatory)
            if revised is not None:
                update.append(revised)
    delete = tuple(
        name
        for name, obj in sorted(current.items())
        if name not in wanted and parse_bool(_annotation(obj)) is True
    )
    return Plan(tuple(create), tuple(update), delete)


def plan_levels(current: Mapping[str, PriorityLevelConfiguration]) -> Plan:
    """The plan for PriorityLevelConfigurations."""
    return plan(current, MANDATORY_LEVELS, SUGGESTED_LEVELS)


def plan_schemas(current: Mapping[str, FlowSchema]) -> Plan:
    """The plan for FlowSchemas."""
    return plan(current, MANDATORY_SCHEMAS, SUGGESTED_SCHEMAS)
