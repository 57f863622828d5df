"""The Job and DaemonSet controllers' pod creates that wait on an admission webhook
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
from kubeprio.api.core import Pod
from kubeprio.apiserver.service import ApiService
from kubeprio.controllers.base import object_key
from kubeprio.controllers.job import JobController
from tests.conftest import ManualClock
from tests.unit.apiserver.test_componentwebhooks import Served, allow, rule_hook, served, until
from tests.unit.controllers.conftest import World
from tests.unit.controllers.test_daemonset import Cluster, daemon_set
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
