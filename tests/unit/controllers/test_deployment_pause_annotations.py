"""The Deployment controller's pause conditions and the annotations its new set follows.

Upstream rules checked (``pkg/controller/deployment``):

* ``sync.go`` ``checkPausedConditions``: pausing sets ``Progressing`` to Unknown,
  ``DeploymentPaused`` / "Deployment is paused"; resuming to ``DeploymentResumed`` /
  "Deployment is resumed" before the rollout goes on.
* ``sync.go`` ``getNewReplicaSet`` with ``util/deployment_util.go``
  ``SetNewReplicaSetAnnotations`` / ``copyDeploymentAnnotationsToReplicaSet``: an
  annotation put on the Deployment after its rollout began (``kubernetes.io/change-cause``)
  reaches the existing new ReplicaSet, the skipped ones do not, and the set's
  ``minReadySeconds`` follows the Deployment's.
"""

from __future__ import annotations

import dataclasses

from kubeprio.api.apps import Deployment, ReplicaSet
from kubeprio.api.core import ResourceRequirements
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.poddefaults import default_pod_template
from kubeprio.client.informer import FuncHandler
from kubeprio.controllers import deploymentutil as du
from tests.unit.controllers.conftest import World
from tests.unit.controllers.test_deployment import controllers, deployment, settle_running


def _progressing(world: World) -> tuple[str | None, str | None, str | None]:
    status = world.api.get(Deployment, "web", "default").status
    condition = du.get_condition(status, du.PROGRESSING)
    assert condition is not None
    return condition.status, condition.reason, condition.message


def _set_paused(world: World, paused: bool) -> None:
    current = world.api.get(Deployment, "web", "default")
    assert current.spec is not None
    world.api.update(
        dataclasses.replace(current, spec=dataclasses.replace(current.spec, paused=paused))
    )


def test_pause_and_resume_set_progressing_unknown_checkPausedConditions(world: World) -> None:
    seen: list[tuple[str | None, str | None, str | None]] = []

    def record(deployment: Deployment) -> None:
        condition = du.get_condition(deployment.status, du.PROGRESSING)
        if condition is not None:
            seen.append((condition.status, condition.reason, condition.message))

    world.deployments.add_handler(FuncHandler(on_update=lambda _old, new: record(new)))
    controllers(world)
    world.api.create(deployment(2))
    settle_running(world)
    assert _progressing(world)[1] == du.NEW_RS_AVAILABLE_REASON
    _set_paused(world, True)
    settle_running(world)
    assert _progressing(world) == ("Unknown", "DeploymentPaused", "Deployment is paused")
    seen.clear()
    _set_paused(world, False)
    settle_running(world)
    # Resumed first; the complete rollout then reports its new set available again.
    assert ("Unknown", "DeploymentResumed", "Deployment is resumed") in seen
    assert _progressing(world)[:2] == ("True", du.NEW_RS_AVAILABLE_REASON)


def test_paused_deployment_with_no_deadline_keeps_its_conditions(world: World) -> None:
    controllers(world)
    unbounded = deployment(1)
    assert unbounded.spec is not None
    world.api.create(
        dataclasses.replace(
            unbounded,
            spec=dataclasses.replace(unbounded.spec, progress_deadline_seconds=du.INT32_MAX),
        )
    )
    settle_running(world)
    _set_paused(world, True)
    settle_running(world)
    status = world.api.get(Deployment, "web", "default").status
    assert du.get_condition(status, du.PROGRESSING) is None


def test_change_cause_follows_into_the_new_set_copyDeploymentAnnotationsToReplicaSet(
    world: World,
) -> None:
    controllers(world)
    world.api.create(deployment(1))
    settle_running(world)
    current = world.api.get(Deployment, "web", "default")
    annotations = {
        **(current.metadata.annotations or {}),
        "kubernetes.io/change-cause": "first rollout",
        "kubectl.kubernetes.io/last-applied-configuration": "{}",
    }
    assert current.spec is not None
    world.api.update(
        dataclasses.replace(
            current,
            metadata=dataclasses.replace(current.metadata, annotations=annotations),
            spec=dataclasses.replace(current.spec, min_ready_seconds=5),
        )
    )
    settle_running(world)
    (rs,) = world.api.list(ReplicaSet, "default").items
    assert rs.metadata.annotation("kubernetes.io/change-cause") == "first rollout"
    assert rs.metadata.annotation("kubectl.kubernetes.io/last-applied-configuration") is None
    assert rs.metadata.annotation(du.REVISION_ANNOTATION) == "1"
    assert rs.spec is not None
    assert rs.spec.min_ready_seconds == 5


def test_annotations_to_copy_skips_and_keeps() -> None:
    d = Deployment(
        metadata=ObjectMeta(
            annotations={
                "a": "1",
                "same": "x",
                du.REVISION_ANNOTATION: "7",
                du.MAX_REPLICAS_ANNOTATION: "9",
            }
        )
    )
    rs = ReplicaSet(metadata=ObjectMeta(annotations={"same": "x", "own": "kept"}))
    assert du.annotations_to_copy(d, rs) == {"a": "1"}


def test_template_without_resources_equals_one_with_empty_resources() -> None:
    """``kubectl rollout undo`` patches back a template serialised by Go, with
    ``resources: {}``; after defaulting it equals (and hashes as) the template first
    applied without ``resources``, so ``FindNewReplicaSet`` reuses the old set."""
    bare = deployment(1)
    assert bare.spec is not None
    assert bare.spec.template is not None
    (container,) = bare.spec.template.spec.containers  # type: ignore[union-attr]
    assert container.resources is None
    spec = dataclasses.replace(
        bare.spec.template.spec,  # type: ignore[arg-type]
        containers=(dataclasses.replace(container, resources=ResourceRequirements()),),
    )
    explicit = dataclasses.replace(bare.spec.template, spec=spec)
    bare_defaulted = default_pod_template(bare.spec.template)
    explicit_defaulted = default_pod_template(explicit)
    assert du.equal_ignore_hash(bare_defaulted, explicit_defaulted)
    assert du.pod_template_hash(bare_defaulted, None) == du.pod_template_hash(
        explicit_defaulted, None
    )
