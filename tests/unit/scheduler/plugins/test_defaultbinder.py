"""DefaultBinder, ported from upstream ``defaultbinder/default_binder_test.go``
(``TestDefaultBinder``): bind through the in-process API service (no mocks)."""

from __future__ import annotations

from kubeprio.api.core import Pod
from kubeprio.scheduler import framework
from kubeprio.scheduler.plugins.defaultbinder import DefaultBinder
from tests.builders import pod


def test_successful_binding_sets_the_node_name(api):
    created = api.create(pod("foo").build())
    status = DefaultBinder(api).bind(
        framework.CycleState(), framework.PodInfo.of(created), "foohost.kubernetes.mydomain.com"
    )
    assert status is None
    bound = api.get(Pod, "foo", "default")
    assert bound.spec.node_name == "foohost.kubernetes.mydomain.com"


def test_binding_error_becomes_an_error_status_with_the_api_message(api):
    """ "binding error": the API's failure is an Error status carrying its message."""
    created = api.create(pod("foo").build())
    binder = DefaultBinder(api)
    assert binder.bind(framework.CycleState(), framework.PodInfo.of(created), "node-1") is None
    status = binder.bind(framework.CycleState(), framework.PodInfo.of(created), "node-2")
    assert status is not None
    assert status.code is framework.Code.ERROR
    assert status.reasons == (
        'Operation cannot be fulfilled on pods/binding "foo": pod foo is already assigned to node "node-1"',
    )


def test_binding_a_missing_pod_is_an_error(api):
    status = DefaultBinder(api).bind(
        framework.CycleState(), framework.PodInfo.of(pod("ghost").build()), "node-1"
    )
    assert status is not None
    assert status.code is framework.Code.ERROR
    assert status.reasons == ('pods "ghost" not found',)
