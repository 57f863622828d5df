"""Controllers' writes that wait on an admission webhook: the Job and DaemonSet pod creates,
the disruption controller's stale-condition reset and the HPA's scale update
(``controllers.base`` requeues on ``WritePendingError``; ``apiserver.controllerwebhooks``
replays the same logical write).

Upstream the controller's worker blocks on ``podControl.CreatePods`` until the webhook
answers, then counts the create (``job_controller.go`` ``manageJob``,
``daemon_controller.go`` ``syncNodes``: ``expectations.CreationObserved`` only for a
create that failed). Here a pending create is neither counted as expected (nothing
waits for an informer event that cannot come) nor recorded as ``FailedCreate``; the key
comes back once the answer is in and the pod is created exactly once, with one webhook
call.
"""

from __future__ import annotations

import asyncio

from kubeprio.api.batch import Job
from kubeprio.api.core import Pod, PodCondition
from kubeprio.api.manifest import decode_object as decode
from kubeprio.apiserver.service import ApiService
from kubeprio.controllers.base import object_key
from kubeprio.controllers.job import JobController
from tests.conftest import ManualClock
from tests.unit.apiserver.test_componentwebhooks import Served, allow, rule_hook, served, until
from tests.unit.controllers.conftest import World
from tests.unit.controllers.test_daemonset import Cluster, daemon_set
from tests.unit.controllers.test_disruption import owned_pod
from tests.unit.controllers.test_horizontal import Rig, hpa_doc
from tests.unit.controllers.test_job import job


def _world(api: ApiService) -> World:
    clock = api.clock
    assert isinstance(clock, ManualClock)
    return World(api, clock)


def _pods_webhook() -> Served:
    return served({"/p": allow()}, rule_hook("p.example.com", "/p", "pods", "CREATE"))


def test_a_jobs_pending_pod_create_is_not_expected_and_is_created_once() -> None:
    env = _pods_webhook()
    world = _world(env.api)
    controller = JobController(
        world.api, clock=world.clock, rng=world.rng, jobs=world.jobs, pods=world.pods
    )
    world.add(controller)
    created = env.api.create(job(completions=1, parallelism=1))
    key = object_key(created)
    env.caller.release.clear()

    async def main() -> None:
        world.settle()
        assert world.pod_list() == []
        # Not counted: the next sync is not held back waiting for an add to be observed.
        assert controller.expectations.satisfied(key)
        assert world.events("FailedCreate") == []
        world.settle()  # another round while the webhook thinks: posts nothing again
        env.caller.release.set()
        await until(lambda: (w := controller.next_wakeup()) is not None and w <= world.clock.now())
        world.settle()

    asyncio.run(main())
    env.waits.close()
    pods = world.pod_list()
    assert len(pods) == 1
    assert pods[0].metadata.owner_references[0].kind == "Job"
    assert env.caller.paths() == ["/p"]
    assert env.writes.posted == 1
    assert (env.api.get(Job, "batch", "default").status.active or 0) == 1


def test_a_daemonsets_pending_pod_create_is_created_once_per_node() -> None:
    env = _pods_webhook()
    world = _world(env.api)
    cluster = Cluster(world)
    cluster.add_nodes("n1", "n2")
    env.caller.release.clear()

    async def main() -> None:
        created = env.api.create(daemon_set())
        world.settle()
        assert world.pod_list() == []
        assert cluster.controller.expectations.satisfied(object_key(created))
        assert world.events("FailedCreate") == []
        env.caller.release.set()
        # The sync's slow-start batch stops at its first pending create; each retry
        # creates that pod and goes on to the next node's.
        for _ in range(20):
            world.settle()
            if len(world.pod_list()) == 2:
                break
            await asyncio.sleep(0.01)

    asyncio.run(main())
    env.waits.close()
    assert sorted(cluster.placement()) == ["n1", "n2"]
    assert len(world.api.list(Pod).items) == 2
    assert env.caller.paths() == ["/p", "/p"]  # one review per node's pod
    assert env.writes.posted == 2


# --- controllers built on controllers.base with queues or writes of their own ----------------


def test_a_stale_disruption_target_reset_waiting_on_its_webhook_is_requeued_and_done_once() -> None:
    """``syncStalePodDisruption``: the reset to False waits on a webhook on pods/status;
    its key comes back once answered (``stalePodDisruptionQueue``) and writes once."""
    env = served({"/s": allow()}, rule_hook("s.example.com", "/s", "pods/status", "UPDATE"))
    world = _world(env.api)
    disruption = world.disruption_controller()
    world.add(disruption)
    owned_pod(world, "web-0", None)
    world.set_phase(  # in place: nobody opted in (one call, before the test's)
        "web-0",
        "Running",
        conditions=(
            PodCondition(
                type="DisruptionTarget",
                status="True",
                reason="PreemptionByScheduler",
                last_transition_time="2026-01-01T00:00:00Z",
            ),
        ),
    )
    world.settle()
    before = len(env.caller.calls)
    env.caller.release.clear()

    def target() -> list[str | None]:
        status = env.api.get(Pod, "web-0", "default").status
        conditions = (status.conditions if status else None) or ()
        return [c.status for c in conditions if c.type == "DisruptionTarget"]

    async def main() -> None:
        world.advance(120)
        assert target() == ["True"]
        env.caller.release.set()
        await until(lambda: (w := disruption.next_wakeup()) is not None and w <= world.clock.now())
        world.settle()

    asyncio.run(main())
    env.waits.close()
    assert target() == ["False"]
    assert len(env.caller.calls) - before == 1
    assert env.writes.posted == 1


def test_an_hpa_scale_write_waiting_on_its_webhook_is_retried_and_scales_once() -> None:
    """``reconcileAutoscaler``'s scale update waits on a webhook on deployments: the HPA's
    key is requeued (no ``FailedRescale``) and the Deployment is scaled once."""
    env = served(
        {"/d": allow()},
        rule_hook("d.example.com", "/d", "deployments", "UPDATE", group="apps"),
    )
    clock = env.api.clock
    assert isinstance(clock, ManualClock)
    rig = Rig(env.api, clock)
    rig.pods_using("900m", "900m")
    rig.api.create(decode(hpa_doc()))
    env.caller.release.clear()

    async def main() -> None:
        rig.advance(15)
        assert rig.replicas() == 2
        assert rig.events("FailedRescale") == []
        env.caller.release.set()
        await until(lambda: (w := rig.controller.next_wakeup()) is not None and w <= clock.now())
        rig.driver.settle()

    asyncio.run(main())
    env.waits.close()
    assert rig.replicas() == 4
    assert rig.events("SuccessfulRescale") == [
        "New size: 4; reason: cpu resource utilization (percentage of request) above target"
    ]
    assert env.caller.paths() == ["/d"]
    assert env.writes.posted == 1
