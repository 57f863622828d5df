"""Kubernetes protobuf request bodies decoded to JSON (``apiserver.protobuf``).

Upstream rules checked (k8s.io/apimachinery ``pkg/runtime/serializer/protobuf``, the
generated ``generated.pb.go`` codecs, ``metav1.Time``/``IntOrString`` marshalling):

* a body is ``k8s\\0`` + ``runtime.Unknown{typeMeta{apiVersion=1, kind=2}=1, raw=2}``;
* negative int32 values are sign-extended 10-byte varints; repeated scalars may be packed;
* a zero ``Time`` marshals to an empty message and is absent; a set one is RFC 3339;
* ``IntOrString`` is ``{type=1, intVal=2, strVal=3}``; ``Quantity`` is ``{string=1}``;
* maps are repeated ``{key=1, value=2}`` entries; an embedded struct's fields merge into
  its parent's JSON; unknown field numbers are skipped;
* non-pointer ``omitempty`` fields marshalled as zero are absent, pointer zeros stay.

The bodies are built here with a few lines of wire encoding; the end-to-end tests send
the real kubectl's bodies.
"""

from __future__ import annotations

import pytest

from kubeprio.api import errors
from kubeprio.apiserver import protobuf


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def num(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def msg(number: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def body(api_version: str, kind: str, raw: bytes) -> bytes:
    return protobuf.MAGIC + msg(1, msg(1, api_version) + msg(2, kind)) + msg(2, raw)


def meta(name: str) -> bytes:
    # ObjectMeta: name=1, generation=7 (zero), creationTimestamp=8 (zero time: empty)
    return msg(1, msg(1, name) + num(7, 0) + msg(8, b""))


def test_priority_class_fields_and_go_zero_values():
    raw = meta("high") + num(2, 1000) + num(3, 0) + msg(4, "") + msg(5, "Never")
    assert protobuf.decode(body("scheduling.k8s.io/v1", "PriorityClass", raw)) == {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "high"},
        "value": 1000,
        "preemptionPolicy": "Never",
    }


def test_negative_int32_is_sign_extended():
    raw = meta("low") + num(2, -5)
    assert protobuf.decode(body("scheduling.k8s.io/v1", "PriorityClass", raw))["value"] == -5


def test_pointer_zero_stays_and_int_or_string_decodes_both_forms():
    # DeploymentSpec: replicas=1 (pointer), strategy=4 {rollingUpdate=2 {maxUnavailable=1,
    # maxSurge=2}}; IntOrString {type=1, intVal=2, strVal=3}
    rolling = msg(1, num(1, 0) + num(2, 2)) + msg(2, num(1, 1) + msg(3, "25%"))
    spec = num(1, 0) + msg(4, msg(2, rolling))
    decoded = protobuf.decode(body("apps/v1", "Deployment", meta("web") + msg(2, spec)))
    assert decoded["spec"]["replicas"] == 0
    assert decoded["spec"]["strategy"]["rollingUpdate"] == {"maxUnavailable": 2, "maxSurge": "25%"}


def test_pdb_min_available_percent():
    spec = msg(1, num(1, 1) + msg(3, "50%"))
    decoded = protobuf.decode(body("policy/v1", "PodDisruptionBudget", meta("p") + msg(2, spec)))
    assert decoded["spec"] == {"minAvailable": "50%"}


def test_time_quantity_maps_inline_and_unknown_fields():
    # Pod: spec=2 {containers=2 [{name=1, resources=8 {limits=1 map<string, Quantity>},
    # livenessProbe=10 {handler=1 (inline ProbeHandler) {exec=1 {command=1}}}}],
    # field 999 (unknown)}; metadata.deletionTimestamp=9
    limits = msg(1, msg(1, "cpu") + msg(2, msg(1, "500m")))
    probe = msg(1, msg(1, msg(1, "true")))
    container = msg(1, "c") + msg(8, limits) + msg(10, probe)
    spec = msg(2, container) + msg(999, "ignored")
    stamp = msg(9, num(1, 1_700_000_000))
    raw = msg(1, msg(1, "p") + stamp) + msg(2, spec)
    decoded = protobuf.decode(body("v1", "Pod", raw))
    assert decoded["metadata"] == {"name": "p", "deletionTimestamp": "2023-11-14T22:13:20Z"}
    assert decoded["spec"] == {
        "containers": [
            {
                "name": "c",
                "resources": {"limits": {"cpu": "500m"}},
                "livenessProbe": {"exec": {"command": ["true"]}},
            }
        ]
    }


def test_packed_and_unpacked_repeated_scalars():
    # PodFailurePolicyOnExitCodesRequirement.values=3 (repeated int32), inside
    # Job.spec=2 {podFailurePolicy=11 {rules=1 [{action=1, onExitCodes=2}]}}
    packed = msg(3, _varint(1) + _varint(2)) + num(3, 3)
    rule = msg(1, "FailJob") + msg(2, msg(2, "In") + packed)
    spec = msg(11, msg(1, rule))
    decoded = protobuf.decode(body("batch/v1", "Job", meta("j") + msg(2, spec)))
    exit_codes = decoded["spec"]["podFailurePolicy"]["rules"][0]["onExitCodes"]
    assert exit_codes == {"operator": "In", "values": [1, 2, 3]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"kind":"Pod"}', "provided input is not protobuf"),
        (body("v1", "Widget", b""), 'no kind "Widget"'),
        (body("v1", "Pod", msg(1, b"")[:-1] + b"\x0a\x05ab"), "malformed protobuf body"),
    ],
    ids=["no-prefix", "unknown-kind", "truncated"],
)
def test_bad_bodies_are_bad_requests(data, message):
    with pytest.raises(errors.BadRequestError) as caught:
        protobuf.decode(data)
    assert message in str(caught.value)


def micro_time(seconds: int, nanos: int) -> bytes:
    return num(1, seconds) + num(2, nanos)


def test_lease_as_client_go_leader_election_sends_it():
    # LeaseSpec: holderIdentity=1, leaseDurationSeconds=2, acquireTime=3, renewTime=4,
    # leaseTransitions=5 (MicroTime: seconds=1, nanos=2).
    raw = msg(1, msg(1, "kube-scheduler") + msg(3, "kube-system")) + msg(
        2,
        msg(1, "host-a_1234")
        + num(2, 15)
        + msg(3, micro_time(1_800_000_000, 0))
        + msg(4, micro_time(1_800_000_010, 123_456_000))
        + num(5, 2),
    )
    decoded = protobuf.decode(body("coordination.k8s.io/v1", "Lease", raw))
    assert decoded["metadata"] == {"name": "kube-scheduler", "namespace": "kube-system"}
    assert decoded["spec"] == {
        "holderIdentity": "host-a_1234",
        "leaseDurationSeconds": 15,
        "acquireTime": "2027-01-15T08:00:00.000000Z",
        "renewTime": "2027-01-15T08:00:10.123456Z",
        "leaseTransitions": 2,
    }
