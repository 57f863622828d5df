"""The API Priority and Fairness configuration loop of ``kubeprio serve``.

What kube-apiserver's two APF post-start hooks do, over kubeprio's store:

* ``priority-and-fairness-config-producer``: at start, and again whenever a FlowSchema
  or PriorityLevelConfiguration changes (upstream re-checks every minute; kubeprio reacts
  to the change itself, so a deleted mandatory object is back at once), the writes of
  ``apiserver.flowcontrolensure``;
* ``priority-and-fairness-config-consumer`` (``apf_controller.go``): the ``Dangling``
  condition of every FlowSchema, ``True``/``NotFound`` when its priority level does not
  exist and ``False``/``Found`` when it does (``presyncFlowSchemaStatus``, written only
  when status, reason or message differ), and a new
  :class:`~kubeprio.apiserver.flowclassifier.FlowClassifier` for the response headers,
  handed to ``on_classifier``.

Driven like ``apiserver.eventttl``: ``start``, then ``pump`` (notes writes to the two
kinds) and ``run_once`` (reconciles once after a change); nothing runs per request and
nothing on the scheduling path. Writes go through the API service as the system; a
conflict or a vanished object is left to the next change to settle.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any, Final, TypeVar

from kubeprio.api import errors
from kubeprio.api.flowcontrol import (
    CONDITION_DANGLING,
    FlowSchema,
    FlowSchemaCondition,
    FlowSchemaStatus,
    PriorityLevelConfiguration,
)
from kubeprio.api.model import evolve
from kubeprio.apiserver import flowcontrolensure
from kubeprio.apiserver.flowclassifier import FlowClassifier, level_name
from kubeprio.apiserver.service import ApiService
from kubeprio.apiserver.writefollower import WriteFollower
from kubeprio.clock import Clock, rfc3339

LOG: Final = logging.getLogger("kubeprio.apiserver")
RESOURCES: Final = ("flowschemas", "prioritylevelconfigurations")
T = TypeVar("T", FlowSchema, PriorityLevelConfiguration)


def dangling_condition(level: str, found: bool, now: str) -> FlowSchemaCondition:
    """``presyncFlowSchemaStatus``'s desired condition for a schema naming ``level``."""
    if found:
        return FlowSchemaCondition(
            type=CONDITION_DANGLING,
            status="False",
            last_transition_time=now,
            reason="Found",
            message=(
                f'This FlowSchema references the PriorityLevelConfiguration object named "{level}" '
                "and it exists"
            ),
        )
    return FlowSchemaCondition(
        type=CONDITION_DANGLING,
        status="True",
        last_transition_time=now,
        reason="NotFound",
        message=(
            f'This FlowSchema references the PriorityLevelConfiguration object named "{level}" '
            "but there is no such object"
        ),
    )


def with_dangling(schema: FlowSchema, found: bool, now: str) -> FlowSchema | None:
    """The schema with its ``Dangling`` condition brought up to date, or None when it
    already says the same (other conditions are kept, in place)."""
    desired = dangling_condition(level_name(schema), found, now)
    conditions = list((schema.status.conditions if schema.status else None) or ())
    for position, condition in enumerate(conditions):
        if condition.type == CONDITION_DANGLING:
            if (condition.status, condition.reason, condition.message) == (
                desired.status,
                desired.reason,
                desired.message,
            ):
                return None
            conditions[position] = desired
            break
    else:
        conditions.append(desired)
    status = evolve(schema.status or FlowSchemaStatus(), conditions=tuple(conditions))
    return evolve(schema, status=status)


class FlowControlConfiguration(WriteFollower):
    """Keeps the bootstrap objects, the Dangling conditions and the classifier current."""

    def __init__(
        self,
        api: ApiService,
        *,
        clock: Clock,
        on_classifier: Callable[[FlowClassifier], None],
    ) -> None:
        super().__init__(api.store)
        self._api = api
        self._clock = clock
        self._on_classifier = on_classifier
        self.classifier: FlowClassifier | None = None

    def start(self) -> None:
        """Ensure the bootstrap configuration, digest it, then follow the two kinds."""
        self.follow(RESOURCES)
        self.reconcile()

    # --- one reconciliation ----------------------------------------------------------------

    def _stored(self, kind: type[T]) -> dict[str, T]:
        listed = self._api.list(kind)
        return {obj.metadata.name or "": obj for obj in listed.items}

    def reconcile(self) -> None:
        """The ensurer's writes, then the Dangling conditions, then a new classifier."""
        self._apply(
            PriorityLevelConfiguration,
            flowcontrolensure.plan_levels(self._stored(PriorityLevelConfiguration)),
        )
        self._apply(FlowSchema, flowcontrolensure.plan_schemas(self._stored(FlowSchema)))
        levels = self._stored(PriorityLevelConfiguration)
        schemas = self._stored(FlowSchema)
        now = rfc3339(self._clock.now())
        for name, schema in schemas.items():
            updated = with_dangling(schema, level_name(schema) in levels, now)
            if updated is not None:
                stored = self._write(
                    partial(self._api.update_object, updated, subresource="status")
                )
                if stored is not None:
                    schemas[name] = stored
        self.classifier = FlowClassifier(schemas.values(), levels.values())
        self._on_classifier(self.classifier)

    def _apply(self, kind: type[Any], plan: flowcontrolensure.Plan) -> None:
        for obj in plan.create:
            self._write(partial(self._api.create_object, obj))
        for obj in plan.update:
            self._write(partial(self._api.update_object, obj))
        for name in plan.delete:
            self._write(partial(self._api.delete_object, kind, name))

    def _write(self, write: Callable[[], Any]) -> Any:
        """Run one write; a conflict, a vanished or an existing object is logged and left
        to the next reconciliation (another writer changed the object meanwhile)."""
        try:
            result = write()
        except errors.StatusError as exc:
            LOG.warning("APF configuration write failed: %s", exc)
            return None
        return getattr(result, "obj", None)
