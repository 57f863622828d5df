"""``SystemPriorityClass``: only cluster admins may use the system classes (seed 000).

Seed 000, *System Priority Class Names*: "We set default policies that deny creation of
pods with PriorityClassNames corresponding to these priorities. Cluster admins can
authorize users or service accounts to create pods with these priorities." kubeprio's
rule is per user (docs/admission.md): ``system:masters`` and in-process callers pass.
"""

from __future__ import annotations

import random

import pytest

from kubeprio.admission.chain import UserInfo
from kubeprio.admission.defaults import default_chain
from kubeprio.api import errors
from kubeprio.api.core import Namespace
from kubeprio.api.meta import ObjectMeta
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.builders import pod
from tests.conftest import ManualClock
from tests.unit.admission.test_tenant import workload

ALICE = UserInfo("alice", ("system:authenticated",))
ADMIN = UserInfo("root", ("system:masters", "system:authenticated"))


@pytest.fixture
def kapi() -> ApiService:
    api = ApiService(MemoryStore(), clock=ManualClock(), rng=random.Random(0))
    api.admission = default_chain(api.listers)
    api.create_object(Namespace(metadata=ObjectMeta(name="team-a")))
    return api


@pytest.mark.parametrize("class_name", ["system-node-critical", "system-cluster-critical"])
def test_a_user_outside_system_masters_may_not_create_a_system_class_pod(kapi, class_name):
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.create_object(pod("p", "team-a").priority_class(class_name).build(), user=ALICE)
    assert raised.value.message == (
        f'pods "p" is forbidden: User "alice" cannot use PriorityClass "{class_name}": '
        "system priority classes are reserved for cluster administrators"
    )


@pytest.mark.parametrize("user", [None, ADMIN], ids=["in-process", "system-masters"])
def test_admins_and_the_system_may(kapi, user):
    created = kapi.create_object(
        pod("p", "team-a").priority_class("system-node-critical").build(), user=user
    ).obj
    assert created.spec.priority == 2000001000


@pytest.mark.parametrize(
    ("kind", "resource"),
    [
        ("Deployment", "deployments.apps"),
        ("ReplicaSet", "replicasets.apps"),
        ("DaemonSet", "daemonsets.apps"),
        ("Job", "jobs.batch"),
        ("CronJob", "cronjobs.batch"),
    ],
)
def test_workloads_are_checked_on_their_template(kapi, kind, resource):
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.create_object(workload(kind, "system-cluster-critical"), user=ALICE)
    assert raised.value.message == (
        f'{resource} "w" is forbidden: pod template: User "alice" cannot use PriorityClass '
        '"system-cluster-critical": system priority classes are reserved for cluster administrators'
    )
    kapi.create_object(workload(kind, "system-cluster-critical"), user=ADMIN)


def test_other_classes_are_not_this_plugins_business(kapi):
    kapi.create_object(pod("p", "team-a").build(), user=ALICE)
    with pytest.raises(errors.ForbiddenError, match="no PriorityClass with name system-x"):
        kapi.create_object(pod("q", "team-a").priority_class("system-x").build(), user=ALICE)
