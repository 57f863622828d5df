"""Every selectable field of every kind, read as upstream's ``GetAttrs`` reads it.

Upstream registries (``pkg/registry/core/pod/strategy.go`` ``PodToSelectableFields``,
``event/strategy.go``, ``node/strategy.go``) expose these fields to ``?fieldSelector=``;
a missing value is the empty string and a boolean is ``"true"``/``"false"``. For each
field, ``field=value`` must select an object carrying that value and ``field!=value``
must not; a field the kind does not have is a 400 ("field label not supported").
"""

from __future__ import annotations

import pytest

from kubeprio.api import errors
from kubeprio.api.core import (
    Event,
    EventSource,
    Node,
    NodeSpec,
    ObjectReference,
    Pod,
    PodSpec,
    PodStatus,
)
from kubeprio.api.kinds import for_model
from kubeprio.api.meta import ObjectMeta
from kubeprio.apiserver.listing import object_filter

_META = ObjectMeta(name="obj-1", namespace="team-a")
POD = Pod(
    metadata=_META,
    spec=PodSpec(
        node_name="node-7",
        restart_policy="Never",
        scheduler_name="my-scheduler",
        service_account_name="robot",
        host_network=True,
    ),
    status=PodStatus(phase="Running", nominated_node_name="node-9", pod_ip="10.1.2.3"),
)
EVENT = Event(
    metadata=_META,
    involved_object=ObjectReference(
        kind="Pod",
        namespace="team-a",
        name="web",
        uid="u-1",
        api_version="v1",
        resource_version="42",
        field_path="spec.containers{app}",
    ),
    reason="Preempted",
    reporting_component="default-scheduler",
    source=EventSource(component="kubelet"),
    type="Normal",
)
NODE = Node(metadata=ObjectMeta(name="node-7"), spec=NodeSpec(unschedulable=True))

CASES = [
    (POD, "metadata.name", "obj-1"),
    (POD, "metadata.namespace", "team-a"),
    (POD, "spec.nodeName", "node-7"),
    (POD, "spec.restartPolicy", "Never"),
    (POD, "spec.schedulerName", "my-scheduler"),
    (POD, "spec.serviceAccountName", "robot"),
    (POD, "spec.hostNetwork", "true"),
    (POD, "status.phase", "Running"),
    (POD, "status.nominatedNodeName", "node-9"),
    (POD, "status.podIP", "10.1.2.3"),
    (Pod(metadata=_META), "spec.nodeName", ""),
    (Pod(metadata=_META), "spec.hostNetwork", "false"),
    (Pod(metadata=_META), "status.phase", ""),
    (EVENT, "involvedObject.kind", "Pod"),
    (EVENT, "involvedObject.namespace", "team-a"),
    (EVENT, "involvedObject.name", "web"),
    (EVENT, "involvedObject.uid", "u-1"),
    (EVENT, "involvedObject.apiVersion", "v1"),
    (EVENT, "involvedObject.resourceVersion", "42"),
    (EVENT, "involvedObject.fieldPath", "spec.containers{app}"),
    (EVENT, "reason", "Preempted"),
    (EVENT, "reportingComponent", "default-scheduler"),
    (EVENT, "source", "kubelet"),
    (EVENT, "type", "Normal"),
    (EVENT, "metadata.name", "obj-1"),
    (NODE, "spec.unschedulable", "true"),
    (Node(metadata=ObjectMeta(name="n")), "spec.unschedulable", "false"),
    (NODE, "metadata.name", "node-7"),
]


@pytest.mark.parametrize(
    ("obj", "field", "value"),
    [pytest.param(*case, id=f"{type(case[0]).__name__}-{case[1]}={case[2]}") for case in CASES],
)
def test_each_field_selects_by_its_value(obj, field, value):
    info = for_model(type(obj))
    equal = object_filter(info, None, f"{field}={value}")
    different = object_filter(info, None, f"{field}!={value}")
    other = object_filter(info, None, f"{field}=something-else")
    assert equal is not None
    assert different is not None
    assert other is not None
    assert equal(obj)
    assert not different(obj)
    assert not other(obj)


def test_several_terms_must_all_hold():
    info = for_model(Pod)
    both = object_filter(info, None, "spec.nodeName=node-7,status.phase!=Succeeded")
    assert both is not None
    assert both(POD)
    clash = object_filter(info, None, "spec.nodeName=node-7,status.phase=Pending")
    assert clash is not None
    assert not clash(POD)


@pytest.mark.parametrize(
    ("model", "field"),
    [(Node, "status.phase"), (Pod, "reason"), (Event, "spec.nodeName")],
)
def test_a_field_the_kind_lacks_is_a_bad_request(model, field):
    with pytest.raises(errors.StatusError) as caught:
        object_filter(for_model(model), None, f"{field}=x")
    assert caught.value.code == 400
    assert caught.value.message == f"field label not supported: {field}"
