"""ResourceQuota for the kinds that are not pods: Services, ConfigMaps, Secrets, quotas, counts.

Upstream rules checked (``pkg/quota/v1/evaluator/core/services.go`` and ``registry.go``,
the generic ``ObjectCountEvaluator``, ``plugin/resourcequota/controller.go``,
``resource_quota_controller.go``/``resource_quota_monitor.go``):

* a Service charges ``count/services`` and ``services`` 1, ``services.nodeports`` its port
  count when NodePort or LoadBalancer (only explicit node ports when a LoadBalancer
  allocates none), ``services.loadbalancers`` 1 for a LoadBalancer; an update is charged
  its growth;
* ConfigMaps, Secrets and ResourceQuotas charge ``count/<resource>`` and the legacy name;
  any other kind ``count/<resource>[.<group>]``; Events nothing;
* these evaluators match no scope; refusals read ``exceeded quota: <q>, requested: ...,
  used: ..., limited: ...``;
* the controller counts them and recounts on deletes and Service type/port changes.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeprio.admission.defaults import default_chain
from kubeprio.api import errors, kinds, quotausage
from kubeprio.api.configmap import ConfigMap
from kubeprio.api.core import Event, Namespace, ObjectReference
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.model import evolve
from kubeprio.api.quantity import parse_quantity
from kubeprio.api.resourcequota import ResourceQuota, ResourceQuotaSpec, ResourceQuotaStatus
from kubeprio.api.secret import Secret
from kubeprio.api.serialization import from_dict
from kubeprio.api.service import Service
from kubeprio.api.serviceaccount import ServiceAccount
from kubeprio.apiserver.service import ApiService
from kubeprio.client.informer import Informer
from kubeprio.controllers.resourcequota import ResourceQuotaController
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.driving import Driver

NS = "team-a"


def svc(name: str, kind: str = "ClusterIP", ports: int | list[Any] = 1, **spec: Any) -> Service:
    """A Service of ``kind`` with ``ports`` ports (a count, or the JSON list)."""
    listed = (
        ports
        if isinstance(ports, list)
        else [{"name": f"p{i}", "port": 80 + i} for i in range(ports)]
    )
    body = {"type": kind, "ports": listed, "selector": {"app": name}, **spec}
    return from_dict(Service, {"metadata": {"name": name, "namespace": NS}, "spec": body})


def usage_text(usage: dict[str, Any]) -> dict[str, str]:
    return {name: str(amount) for name, amount in usage.items()}


SERVICES = kinds.for_model(Service)


@pytest.mark.parametrize(
    ("service", "expected"),
    [
        (svc("c", ports=2), {"services.nodeports": "0", "services.loadbalancers": "0"}),
        (svc("n", "NodePort", ports=2), {"services.nodeports": "2", "services.loadbalancers": "0"}),
        (
            svc("l", "LoadBalancer", ports=3),
            {"services.nodeports": "3", "services.loadbalancers": "1"},
        ),
        # allocateLoadBalancerNodePorts false: only the ports that name a node port.
        (
            svc(
                "m", "LoadBalancer", allocateLoadBalancerNodePorts=False,
                ports=[{"name": "a", "port": 80, "nodePort": 30080}, {"name": "b", "port": 81}],
            ),
            {"services.nodeports": "1", "services.loadbalancers": "1"},
        ),
        (
            from_dict(
                Service,
                {"metadata": {"name": "x", "namespace": NS},
                 "spec": {"type": "ExternalName", "externalName": "db.example.com"}},
            ),
            {"services.nodeports": "0", "services.loadbalancers": "0"},
        ),
    ],
    ids=["cluster-ip", "node-port", "load-balancer", "lb-without-node-ports", "external-name"],
)  # fmt: skip
def test_service_usage(service, expected):
    assert usage_text(quotausage.object_usage(SERVICES, service)) == {
        "count/services": "1",
        "services": "1",
        **expected,
    }


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (ConfigMap, {"configmaps", "count/configmaps"}),
        (Secret, {"secrets", "count/secrets"}),
        (ResourceQuota, {"resourcequotas", "count/resourcequotas"}),
        (ServiceAccount, {"count/serviceaccounts"}),
        (kinds.for_name("deploy").model, {"count/deployments.apps"}),
        (Event, set()),  # DefaultIgnoredResources
    ],
    ids=["configmaps", "secrets", "resourcequotas", "serviceaccounts", "deployments", "events"],
)
def test_object_count_names(model, expected):
    assert quotausage.resource_names(kinds.for_model(model)) == expected


# --- admission and the controller, in-process ----------------------------------------------


def _q(values: dict[str, str]) -> dict[str, Any]:
    return {name: parse_quantity(text) for name, text in values.items()}


class World:
    def __init__(self) -> None:
        self.clock = ManualClock()
        api = ApiService(MemoryStore(), clock=self.clock, rng=random.Random(0))
        api.admission = default_chain(api.listers)
        api.create_object(Namespace(metadata=ObjectMeta(name=NS)))
        self.api = api
        from kubeprio.api.core import Pod

        pods: Informer[Any] = Informer(api, Pod)
        quotas: Informer[ResourceQuota] = Informer(api, ResourceQuota)
        counted = [Informer(api, kind) for kind in (Service, ConfigMap, Secret, ServiceAccount)]
        counted.append(Informer(api, Event))  # given, but never counted
        self.controller = ResourceQuotaController(
            api, clock=self.clock, rng=random.Random(0), pods=pods, quotas=quotas,
            counted=counted,
        )  # fmt: skip
        self.driver = Driver(self.clock, [pods, quotas, *counted], [self.controller])

    def quota(self, name: str, hard: dict[str, str], **spec: Any) -> None:
        self.api.create_object(
            ResourceQuota(
                metadata=ObjectMeta(name=name, namespace=NS),
                spec=ResourceQuotaSpec(hard=_q(hard), **spec),
            )
        )
        self.driver.settle()

    def used(self, name: str) -> dict[str, str]:
        stored = self.api.get(ResourceQuota, name, NS)
        return usage_text(dict((stored.status or ResourceQuotaStatus()).used or {}))

    def refused(self, obj: Any) -> str:
        with pytest.raises(errors.ForbiddenError) as raised:
            self.api.create_object(obj)
        return raised.value.message


@pytest.fixture
def world() -> World:
    return World()


def cm(name: str) -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace=NS), data={"k": "v"})


def test_legacy_names_and_counts_are_charged_and_enforced(world):
    world.api.create_object(cm("before"))
    world.quota(
        "q",
        {
            "configmaps": "2",
            "count/secrets": "1",
            "count/serviceaccounts": "5",
            "count/events": "1",
        },
    )
    # Existing objects are counted; names no evaluator tracks (count/events) stay out.
    assert world.used("q") == {
        "configmaps": "1", "count/secrets": "0", "count/serviceaccounts": "0"
    }  # fmt: skip
    world.api.create_object(cm("second"))
    assert world.used("q")["configmaps"] == "2"
    assert world.refused(cm("third")) == (
        'configmaps "third" is forbidden: exceeded quota: q, requested: configmaps=1, '
        "used: configmaps=2, limited: configmaps=2"
    )
    secret = Secret(metadata=ObjectMeta(name="s", namespace=NS))
    world.api.create_object(secret)
    assert "exceeded quota: q, requested: count/secrets=1" in world.refused(
        evolve(secret, metadata=ObjectMeta(name="t", namespace=NS))
    )
    # Events are ignored by quota altogether.
    event = Event(
        metadata=ObjectMeta(name="e", namespace=NS),
        involved_object=ObjectReference(kind="Pod", name="p", namespace=NS),
        reason="Test",
    )
    world.api.create_object(event)
    world.api.create_object(evolve(event, metadata=ObjectMeta(name="f", namespace=NS)))


def test_a_deleted_object_is_given_back(world):
    world.quota("q", {"configmaps": "1"})
    world.api.create_object(cm("a"))
    world.api.delete(ConfigMap, "a", NS)
    world.driver.settle()
    assert world.used("q") == {"configmaps": "0"}
    world.api.create_object(cm("b"))


def test_node_ports_and_load_balancers(world):
    world.quota("q", {"services": "3", "services.nodeports": "0", "services.loadbalancers": "0"})
    assert world.refused(svc("np", "NodePort")) == (
        'services "np" is forbidden: exceeded quota: q, requested: services.nodeports=1, '
        "used: services.nodeports=0, limited: services.nodeports=0"
    )
    assert world.refused(svc("lb", "LoadBalancer", ports=2)) == (
        'services "lb" is forbidden: exceeded quota: q, requested: '
        "services.loadbalancers=1,services.nodeports=2, used: "
        "services.loadbalancers=0,services.nodeports=0, limited: "
        "services.loadbalancers=0,services.nodeports=0"
    )
    world.api.create_object(svc("web"))
    assert world.used("q") == {
        "services": "1", "services.loadbalancers": "0", "services.nodeports": "0"
    }  # fmt: skip


def test_a_service_update_is_charged_its_growth(world):
    # The service evaluator handles updates: ClusterIP -> NodePort costs node ports.
    world.quota("q", {"services.nodeports": "2"})
    created = world.api.create_object(svc("web", ports=3)).obj
    with pytest.raises(errors.ForbiddenError, match=r"requested: services\.nodeports=3"):
        world.api.update(evolve(created, spec=evolve(created.spec, type="NodePort")))
    two = world.api.create_object(svc("two", ports=2)).obj
    world.api.update(evolve(two, spec=evolve(two.spec, type="NodePort")))
    assert world.used("q") == {"services.nodeports": "2"}
    # Back to ClusterIP: the controller gives the ports back.
    current = world.api.get(Service, "two", NS)
    ports = tuple(evolve(port, node_port=None) for port in current.spec.ports)
    world.api.update(evolve(current, spec=evolve(current.spec, type="ClusterIP", ports=ports)))
    world.driver.settle()
    assert world.used("q") == {"services.nodeports": "0"}


def test_resource_quotas_count_themselves(world):
    world.quota("first", {"resourcequotas": "1"})
    assert world.used("first") == {"resourcequotas": "1"}
    assert world.refused(
        ResourceQuota(metadata=ObjectMeta(name="second", namespace=NS), spec=ResourceQuotaSpec())
    ) == (
        'resourcequotas "second" is forbidden: exceeded quota: first, requested: '
        "resourcequotas=1, used: resourcequotas=1, limited: resourcequotas=1"
    )


def test_a_scoped_quota_never_tracks_other_kinds(world):
    # MatchesNoScopeFunc: the object-count evaluators match no scope.
    # (A scope cannot go with the legacy name, which validation ties to no scope.)
    world.quota("q", {"count/configmaps": "0", "pods": "5"}, scopes=("BestEffort",))
    world.api.create_object(cm("free"))
    assert world.used("q") == {"count/configmaps": "0", "pods": "0"}
