"""The Job controller after a pod delete the API refuses.

Upstream v1.32 ``pkg/controller/job/job_controller.go`` ``deleteJobPods``: a failed
delete lowers the Job's deletion expectations at once, "because the informer won't
observe this deletion", and ``RealPodControl.DeletePod`` records a ``FailedDelete``
event. So the next sync of the Job, however soon, manages its pods again instead of
waiting out the expectations' five-minute timeout.
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from kubeprio.admission.chain import AdmissionChain
from kubeprio.admission.validatingpolicy import ValidatingAdmissionPolicyPlugin
from kubeprio.api.admissionpolicy import (
    ValidatingAdmissionPolicy,
    ValidatingAdmissionPolicyBinding,
)
from kubeprio.api.batch import Job
from kubeprio.api.serialization import from_dict
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.unit.controllers.conftest import World
from tests.unit.controllers.test_job import job, live_pods, setup


@pytest.fixture
def api(store: MemoryStore, clock: ManualClock) -> ApiService:
    """The in-process API with the ValidatingAdmissionPolicy plugin on writes and deletes."""
    policies = ValidatingAdmissionPolicyPlugin(StoreListers(store))
    chain = AdmissionChain(validating=(policies,), delete_validating=(policies,))
    return ApiService(store, clock=clock, rng=random.Random(1), admission=chain)


def keep_pods() -> tuple[ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding]:
    """A policy refusing every pod delete."""
    rule = {
        "operations": ["DELETE"],
        "apiGroups": [""],
        "apiVersions": ["v1"],
        "resources": ["pods"],
    }
    policy = from_dict(
        ValidatingAdmissionPolicy,
        {
            "metadata": {"name": "keep-pods"},
            "spec": {
                "matchConstraints": {"resourceRules": [rule]},
                "validations": [{"expression": "false", "message": "pods stay"}],
            },
        },
    )
    binding = from_dict(
        ValidatingAdmissionPolicyBinding,
        {
            "metadata": {"name": "keep-pods"},
            "spec": {"policyName": "keep-pods", "validationActions": ["Deny"]},
        },
    )
    return policy, binding


def test_a_refused_delete_does_not_hold_the_next_sync(world: World) -> None:
    setup(world)
    world.api.create(job(completions=4, parallelism=2))
    world.settle()
    assert len(live_pods(world)) == 2

    policy, binding = keep_pods()
    world.api.create(policy)
    world.api.create(binding)
    current = world.api.get(Job, "batch", "default")
    assert current.spec is not None
    world.api.update(
        dataclasses.replace(current, spec=dataclasses.replace(current.spec, parallelism=1))
    )
    world.settle()
    assert len(live_pods(world)) == 2  # the surplus pod's delete was refused
    refused = world.events("FailedDelete")
    assert refused
    assert "pods stay" in (refused[0].message or "")

    world.api.delete(ValidatingAdmissionPolicyBinding, "keep-pods")
    world.api.delete(ValidatingAdmissionPolicy, "keep-pods")
    # Any change to the Job syncs it; well within the expectations' five-minute timeout.
    current = world.api.get(Job, "batch", "default")
    labelled = dataclasses.replace(
        current, metadata=dataclasses.replace(current.metadata, labels={"touched": "yes"})
    )
    world.api.update(labelled)
    world.advance(1)
    world.settle()
    assert len(live_pods(world)) == 1
