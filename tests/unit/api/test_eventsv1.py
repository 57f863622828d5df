"""events.k8s.io/v1 Event <-> core/v1 Event (``api.eventsv1``).

Upstream: ``pkg/apis/events/v1/conversion.go`` (``Convert_v1_Event_To_core_Event``,
``Convert_core_Event_To_v1_Event``: the renamed fields) and its
``AddFieldLabelConversionsForEvent`` (the field labels events.k8s.io/v1 accepts).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubeprio.api import errors, eventsv1
from kubeprio.api.core import Event
from kubeprio.api.serialization import from_dict, to_dict

CORE_EVENT = {
    "apiVersion": "v1",
    "kind": "Event",
    "metadata": {"name": "web.17", "namespace": "default", "resourceVersion": "7"},
    "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web", "uid": "u1"},
    "reason": "Scheduled",
    "message": "Successfully assigned default/web to node-1",
    "source": {"component": "kubelet", "host": "node-1"},
    "firstTimestamp": "2024-05-01T10:00:00Z",
    "lastTimestamp": "2024-05-01T10:00:05Z",
    "count": 3,
    "type": "Normal",
    "eventTime": "2024-05-01T10:00:00.123456Z",
    "series": {"count": 2, "lastObservedTime": "2024-05-01T10:00:05.000001Z"},
    "action": "Binding",
    "related": {"kind": "Node", "name": "node-1"},
    "reportingComponent": "default-scheduler",
    "reportingInstance": "default-scheduler-host",
}

V1_EVENT = {
    "kind": "Event",
    "apiVersion": "events.k8s.io/v1",
    "metadata": CORE_EVENT["metadata"],
    "eventTime": "2024-05-01T10:00:00.123456Z",
    "series": {"count": 2, "lastObservedTime": "2024-05-01T10:00:05.000001Z"},
    "reportingController": "default-scheduler",
    "reportingInstance": "default-scheduler-host",
    "action": "Binding",
    "reason": "Scheduled",
    "regarding": CORE_EVENT["involvedObject"],
    "related": {"kind": "Node", "name": "node-1"},
    "note": "Successfully assigned default/web to node-1",
    "type": "Normal",
    "deprecatedSource": {"component": "kubelet", "host": "node-1"},
    "deprecatedFirstTimestamp": "2024-05-01T10:00:00Z",
    "deprecatedLastTimestamp": "2024-05-01T10:00:05Z",
    "deprecatedCount": 3,
}


def test_every_field_is_renamed_as_upstream_converts_it():
    assert eventsv1.to_v1(CORE_EVENT) == V1_EVENT
    assert list(eventsv1.to_v1(CORE_EVENT)) == list(V1_EVENT)  # the Go struct's order
    assert eventsv1.from_v1(V1_EVENT) == CORE_EVENT


def test_unset_fields_are_written_as_gos_encoder_writes_them():
    """``eventTime`` and the deprecated timestamps have no omitempty (null when zero);
    ``regarding`` and ``deprecatedSource`` are struct values ({}); the count is omitempty."""
    view = eventsv1.to_v1({"metadata": {"name": "e"}, "count": 0})
    assert view == {
        "kind": "Event",
        "apiVersion": "events.k8s.io/v1",
        "metadata": {"name": "e"},
        "eventTime": None,
        "regarding": {},
        "deprecatedSource": {},
        "deprecatedFirstTimestamp": None,
        "deprecatedLastTimestamp": None,
    }
    assert eventsv1.from_v1(view) == {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e"},
        "involvedObject": {},
        "source": {},
    }


_TEXT = st.text(alphabet="abcxyz-./ ", min_size=1, max_size=8)
_TIME = st.sampled_from(["2024-05-01T10:00:00Z", "2025-01-02T03:04:05Z"])
_MICRO = st.sampled_from(["2024-05-01T10:00:00.000001Z", "2025-01-02T03:04:05.500000Z"])
_REF = st.fixed_dictionaries({}, optional={"kind": _TEXT, "name": _TEXT, "uid": _TEXT})
_CORE = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("Event"), "metadata": st.just({"name": "e"})},
    optional={
        "involvedObject": _REF,
        "reason": _TEXT,
        "message": _TEXT,
        "source": st.fixed_dictionaries({}, optional={"component": _TEXT, "host": _TEXT}),
        "firstTimestamp": _TIME,
        "lastTimestamp": _TIME,
        "count": st.integers(1, 2**31 - 1),
        "type": _TEXT,
        "eventTime": _MICRO,
        "series": st.fixed_dictionaries({"count": st.integers(2, 100), "lastObservedTime": _MICRO}),
        "action": _TEXT,
        "related": _REF,
        "reportingComponent": _TEXT,
        "reportingInstance": _TEXT,
    },
)


@given(_CORE)
def test_core_to_v1_and_back_is_the_identity(core):
    # The two struct values come back empty rather than absent, as Go's would.
    expected = {"involvedObject": {}, "source": {}, **core}
    assert eventsv1.from_v1(eventsv1.to_v1(core)) == expected
    stored = from_dict(Event, expected)
    # Served alike: Go cannot tell an unset string from "" (to_dict writes reportingComponent
    # "", which comes back as "" rather than unset).
    back = from_dict(Event, eventsv1.from_v1(eventsv1.to_v1(to_dict(stored))))
    assert to_dict(back) == to_dict(stored)


@given(_CORE)
def test_v1_to_core_and_back_is_the_identity(core):
    view = eventsv1.to_v1(core)
    assert eventsv1.to_v1(eventsv1.from_v1(view)) == view


@pytest.mark.parametrize(
    ("selector", "converted"),
    [
        ("regarding.name=web", "involvedObject.name=web"),
        (
            "regarding.kind=Pod,regarding.namespace!=kube-system",
            "involvedObject.kind=Pod,involvedObject.namespace!=kube-system",
        ),
        ("reportingController=default-scheduler", "reportingComponent=default-scheduler"),
        ("regarding.uid==u1,type=Warning", "involvedObject.uid=u1,type=Warning"),
        ("reason=a\\,b", "reason=a\\,b"),
        (
            "source=kubelet,metadata.name=x,metadata.namespace=y",
            "source=kubelet,metadata.name=x,metadata.namespace=y",
        ),
        (
            "regarding.apiVersion=v1,regarding.resourceVersion=3,regarding.fieldPath=spec",
            "involvedObject.apiVersion=v1,involvedObject.resourceVersion=3,involvedObject.fieldPath=spec",
        ),
    ],
)
def test_field_labels_select_the_core_fields(selector, converted):
    # The parser keeps its terms sorted by their text, so compare them as sets.
    assert set(eventsv1.convert_field_selector(selector).split(",")) == set(converted.split(","))


@pytest.mark.parametrize(
    "label", ["involvedObject.name", "reportingComponent", "note", "regarding", "deprecatedSource"]
)
def test_core_names_are_not_field_labels_of_events_k8s_io(label):
    with pytest.raises(errors.BadRequestError) as raised:
        eventsv1.convert_field_selector(f"{label}=x")
    assert raised.value.message == f"field label not supported: {label}"
