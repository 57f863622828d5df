"""The Priority admission plugin (issue 2 section 4; semantics section 2).

Tables mirror upstream ``plugin/pkg/admission/priority/admission_test.go``:
``TestPodAdmission``, ``TestDefaultPriority`` and ``TestPriorityClassAdmission`` (case
names are upstream's, typos included), with the texts of ``admission.go`` checked
exactly. As upstream's tests do, classes are put straight into the lister's store
without defaulting, so some have no preemptionPolicy.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from kubeprio.admission.chain import AdmissionOutcome
from kubeprio.admission.priority import PriorityPlugin, default_resolution
from kubeprio.api import errors
from kubeprio.api.core import Pod, PodSpec
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.scheduling import PriorityClass
from kubeprio.store.interface import ObjectKey
from tests.builders import admission_request, pod, priority_class, stored_listers

DEFAULT1 = priority_class("default1", 1000, global_default=True)
DEFAULT2 = priority_class("default2", 2000, global_default=True)
NONDEFAULT1 = dataclasses.replace(
    priority_class("nondefault1", 2000), description="Just a test priority class"
)
SYSTEM_CLUSTER_CRITICAL = priority_class(
    "system-cluster-critical", 2_000_000_000, global_default=True
)
PREEMPTION_POLICY_CLASS = priority_class(
    "nopreemptionpolicy", 2000, global_default=True, policy="PreemptLowerPriority"
)
NEVER_CLASS = priority_class("batch", 10, policy="Never")


def upstream_pod(
    name: str,
    namespace: str = "namespace",
    *,
    class_name: str | None = None,
    priority: int | None = None,
    policy: str | None = None,
    mirror: bool = False,
) -> Pod:
    built = pod(name, namespace).build()
    annotations = {"kubernetes.io/config.mirror": ""} if mirror else None
    return dataclasses.replace(
        built,
        metadata=dataclasses.replace(built.metadata, annotations=annotations),
        spec=dataclasses.replace(
            built.spec or PodSpec(),
            priority_class_name=class_name,
            priority=priority,
            preemption_policy=policy,
        ),
    )


POD_W_CLASS = upstream_pod("pod-w-priorityclass", class_name="default1")
POD_WO_CLASS = upstream_pod("pod-wo-priorityclass")
POD_W_MISSING = upstream_pod("pod-w-non-existing-priorityclass", class_name="non-existing")
POD_W_INTEGER = upstream_pod("pod-w-integer-priority", class_name="default1", priority=1000)
POD_W_SYSTEM = upstream_pod(
    "pod-w-system-priority", "kube-system", class_name="system-cluster-critical"
)
MIRROR_W_SYSTEM = upstream_pod(
    "mirror-pod-w-system-priority",
    "kube-system",
    class_name="system-cluster-critical",
    mirror=True,
)
MIRROR_W_INTEGER = upstream_pod(
    "mirror-pod-w-integer-priority", class_name="default1", priority=1000, mirror=True
)
POD_SYSTEM_NONSYSTEM_NS = upstream_pod(
    "pod-w-system-priority-in-nonsystem-namespace",
    "non-system-namespace",
    class_name="system-cluster-critical",
)
POD_ZERO = upstream_pod("pod-w-zero-priority-in-nonsystem-namespace", priority=0)
POD_MATCHING_DEFAULT = upstream_pod("pod-w-priority-matching-default-priority", priority=2000)
POD_MATCHING_RESOLVED = upstream_pod(
    "pod-w-priority-matching-resolved-default-priority",
    "kube-system",
    class_name="system-cluster-critical",
    priority=2_000_000_000,
)
POD_NIL_POLICY = upstream_pod(
    "pod-never-preemption-policy-matching-resolved-preemption-policy",
    "kube-system",
    class_name="nopreemptionpolicy",
    priority=2000,
)
POD_MATCHING_POLICY = upstream_pod(
    "pod-preemption-policy-matching-resolved-preemption-policy",
    "kube-system",
    class_name="nopreemptionpolicy",
    priority=2000,
    policy="PreemptLowerPriority",
)
POD_MISMATCHED_POLICY = upstream_pod(
    "pod-preemption-policy-not-matching-resolved-preemption-policy",
    "kube-system",
    class_name="nopreemptionpolicy",
    priority=2000,
    policy="Never",
)


def admit(classes: list[PriorityClass], obj: Pod, **request: Any) -> Pod:
    _, listers = stored_listers(*classes)
    result = PriorityPlugin(listers).admit(admission_request(obj, **request), AdmissionOutcome())
    assert isinstance(result, Pod)
    return result


# (upstream case name, existing classes, pod, expected (class, priority, policy))
ADMITTED = [
    ("Pod with priority class", [DEFAULT1, NONDEFAULT1], POD_W_CLASS, ("default1", 1000, None)),
    ("Pod without priority class", [DEFAULT1], POD_WO_CLASS, ("default1", 1000, None)),
    (
        "pod without priority class and no existing priority class",
        [],
        POD_WO_CLASS,
        (None, 0, "PreemptLowerPriority"),
    ),
    (
        "pod without priority class and no default class",
        [NONDEFAULT1],
        POD_WO_CLASS,
        (None, 0, "PreemptLowerPriority"),
    ),
    (
        "pod with a system priority class",
        [SYSTEM_CLUSTER_CRITICAL],
        POD_W_SYSTEM,
        ("system-cluster-critical", 2_000_000_000, None),
    ),
    (
        "mirror pod with system priority class",
        [SYSTEM_CLUSTER_CRITICAL],
        MIRROR_W_SYSTEM,
        ("system-cluster-critical", 2_000_000_000, None),
    ),
    (
        "pod with system critical priority in non-system namespace",
        [SYSTEM_CLUSTER_CRITICAL],
        POD_SYSTEM_NONSYSTEM_NS,
        ("system-cluster-critical", 2_000_000_000, None),
    ),
    (
        "pod with priority that matches computed priority",
        [NONDEFAULT1],
        POD_ZERO,
        (None, 0, "PreemptLowerPriority"),
    ),
    (
        "pod with priority that matches default priority",
        [DEFAULT2],
        POD_MATCHING_DEFAULT,
        ("default2", 2000, None),
    ),
    (
        "pod with priority that matches resolved priority",
        [SYSTEM_CLUSTER_CRITICAL],
        POD_MATCHING_RESOLVED,
        ("system-cluster-critical", 2_000_000_000, None),
    ),
    (
        "pod with nil preemtpion policy",
        [PREEMPTION_POLICY_CLASS],
        POD_NIL_POLICY,
        ("nopreemptionpolicy", 2000, "PreemptLowerPriority"),
    ),
    (
        "pod with preemtpion policy that matches resolved preemtpion policy",
        [PREEMPTION_POLICY_CLASS],
        POD_MATCHING_POLICY,
        ("nopreemptionpolicy", 2000, "PreemptLowerPriority"),
    ),
    (
        "a Never class gives the pod policy Never",
        [NEVER_CLASS],
        upstream_pod("batch-pod", class_name="batch"),
        ("batch", 10, "Never"),
    ),
    (
        "the global default's Never policy is copied too",
        [dataclasses.replace(NEVER_CLASS, global_default=True)],
        upstream_pod("batch-pod"),
        ("batch", 10, "Never"),
    ),
]


@pytest.mark.parametrize(
    ("classes", "obj", "expected"),
    [case[1:] for case in ADMITTED],
    ids=[case[0] for case in ADMITTED],
)
def test_pod_admission_resolves_priority(
    classes: list[PriorityClass], obj: Pod, expected: tuple[str | None, int, str | None]
) -> None:
    """Upstream TestPodAdmission (success cases) and admitPod's resolution rules."""
    spec = admit(classes, obj).spec
    assert spec is not None
    assert (spec.priority_class_name, spec.priority, spec.preemption_policy) == expected


REJECTED = [
    (
        "Pod with non-existing priority class",
        [DEFAULT1, NONDEFAULT1],
        POD_W_MISSING,
        'pods "pod-w-non-existing-priorityclass" is forbidden: '
        "no PriorityClass with name non-existing was found",
    ),
    (
        "pod with integer priority",
        [],
        POD_W_INTEGER,
        'pods "pod-w-integer-priority" is forbidden: no PriorityClass with name default1 was found',
    ),
    (
        "mirror pod with integer priority",
        [],
        MIRROR_W_INTEGER,
        'pods "mirror-pod-w-integer-priority" is forbidden: '
        "no PriorityClass with name default1 was found",
    ),
    (
        "pod with preemtpion policy that does't matches resolved preemtpion policy",
        [PREEMPTION_POLICY_CLASS],
        POD_MISMATCHED_POLICY,
        'pods "pod-preemption-policy-not-matching-resolved-preemption-policy" is forbidden: '
        "the string value of PreemptionPolicy (Never) must not be provided in pod spec; "
        "priority admission controller computed PreemptLowerPriority from the given "
        "PriorityClass name",
    ),
    (
        "priority that differs from the class value",
        [DEFAULT1],
        upstream_pod("stale", class_name="default1", priority=999),
        'pods "stale" is forbidden: the integer value of priority (999) must not be provided '
        "in pod spec; priority admission controller computed 1000 from the given "
        "PriorityClass name",
    ),
    (
        "priority that differs from the global default",
        [DEFAULT1],
        upstream_pod("copied", priority=0),
        'pods "copied" is forbidden: the integer value of priority (0) must not be provided '
        "in pod spec; priority admission controller computed 1000 from the given "
        "PriorityClass name",
    ),
    (
        "policy that differs from the zero default",
        [],
        upstream_pod("eager", policy="Never"),
        'pods "eager" is forbidden: the string value of PreemptionPolicy (Never) must not be '
        "provided in pod spec; priority admission controller computed PreemptLowerPriority "
        "from the given PriorityClass name",
    ),
]


@pytest.mark.parametrize(
    ("classes", "obj", "message"),
    [case[1:] for case in REJECTED],
    ids=[case[0] for case in REJECTED],
)
def test_pod_admission_refuses(classes: list[PriorityClass], obj: Pod, message: str) -> None:
    """Upstream TestPodAdmission (error cases): 403 Forbidden with admission.go's texts."""
    with pytest.raises(errors.ForbiddenError) as raised:
        admit(classes, obj)
    assert raised.value.message == message
    assert raised.value.status.code == 403


def test_generate_name_pod_is_named_by_its_prefix_in_errors() -> None:
    """Upstream extractResourceName: no name yet, so the generateName is shown."""
    obj = dataclasses.replace(
        upstream_pod("", class_name="missing"),
        metadata=ObjectMeta(generate_name="web-", namespace="namespace"),
    )
    with pytest.raises(errors.ForbiddenError) as raised:
        admit([], obj)
    assert raised.value.message.startswith('pods "web-" is forbidden: ')


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        (
            upstream_pod("p", class_name="default1"),
            upstream_pod("p", class_name="default1", priority=1000, policy="Never"),
            (1000, "Never"),
        ),
        (
            upstream_pod("p", priority=5, policy="PreemptLowerPriority"),
            upstream_pod("p", priority=1000, policy="Never"),
            (5, "PreemptLowerPriority"),
        ),
        (upstream_pod("p"), upstream_pod("p"), (None, None)),
    ],
    ids=[
        "omitted priority and policy are back-filled",
        "given values are left to validation",
        "nothing to back-fill",
    ],
)
def test_pod_update_only_backfills(
    new: Pod, old: Pod, expected: tuple[int | None, str | None]
) -> None:
    """admitPod on Update: preserve the old priority/policy; no class lookup (none exist)."""
    spec = admit([], new, operation="UPDATE", old=old).spec
    assert spec is not None
    assert (spec.priority, spec.preemption_policy) == expected


@pytest.mark.parametrize("subresource", ["status", "binding", "eviction"])
def test_subresources_are_ignored(subresource: str) -> None:
    """Admit: 'Ignore all calls to subresources'."""
    assert admit([], POD_W_MISSING, subresource=subresource) == POD_W_MISSING


def test_delete_is_a_noop() -> None:
    assert admit([], POD_W_MISSING, operation="DELETE") == POD_W_MISSING


def test_unchanged_pod_is_returned_as_is() -> None:
    """Admitting an admitted pod returns the very same object (reinvocation-safe)."""
    first = admit([DEFAULT1], POD_WO_CLASS)
    assert admit([DEFAULT1], first) is first


# --- TestDefaultPriority ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "change", "expected_before", "expected_after"),
    [
        ([DEFAULT1], None, ("default1", 1000), ("default1", 1000)),
        ([NONDEFAULT1], ("create", DEFAULT1), ("", 0), ("default1", 1000)),
        ([DEFAULT1, DEFAULT2], ("delete", DEFAULT1), ("default1", 1000), ("default2", 2000)),
        ([DEFAULT1], ("delete", DEFAULT1), ("default1", 1000), ("", 0)),
        (
            [DEFAULT1],
            ("update", dataclasses.replace(DEFAULT1, global_default=False)),
            ("default1", 1000),
            ("", 0),
        ),
    ],
    ids=[
        "simple resolution with a default class",
        "add a default class",
        "multiple default classes resolves to the minimum value among them",
        "delete default priority class",
        "update default class and remove its global default",
    ],
)
def test_default_priority(
    before: list[PriorityClass],
    change: tuple[str, PriorityClass] | None,
    expected_before: tuple[str, int],
    expected_after: tuple[str, int],
) -> None:
    """Upstream TestDefaultPriority: getDefaultPriority before and after a change."""
    store, listers = stored_listers(*before)
    resolution = default_resolution(listers)
    assert (resolution.class_name, resolution.priority) == expected_before
    if change is not None:
        verb, obj = change
        key = ObjectKey("priorityclasses", "", obj.metadata.name or "")
        if verb == "create":
            store.create(key, obj)
        elif verb == "delete":
            store.delete(key)
        else:
            store.update(key, obj, expected_revision=None)
    resolution = default_resolution(listers)
    assert (resolution.class_name, resolution.priority) == expected_after


# --- TestPriorityClassAdmission -------------------------------------------------------------


def validate_class(
    existing: list[PriorityClass], new: PriorityClass, operation: str = "CREATE"
) -> None:
    _, listers = stored_listers(*existing)
    old = next((c for c in existing if c.metadata.name == new.metadata.name), None)
    request = admission_request(new, operation=operation, old=old)
    PriorityPlugin(listers).validate(request, AdmissionOutcome())


@pytest.mark.parametrize(
    ("existing", "new", "operation"),
    [
        ([], DEFAULT1, "CREATE"),
        (
            [],
            dataclasses.replace(
                priority_class("system-test", 1_000_000_001),
                description="Name has system critical prefix",
            ),
            "CREATE",
        ),
        ([DEFAULT1], NONDEFAULT1, "CREATE"),
        ([DEFAULT1], dataclasses.replace(DEFAULT1, description="edited"), "UPDATE"),
        ([DEFAULT1], dataclasses.replace(DEFAULT1, global_default=False), "UPDATE"),
        ([DEFAULT1, DEFAULT2], dataclasses.replace(DEFAULT1, description="x"), "UPDATE"),
    ],
    ids=[
        "one default class",
        "system name and value are allowed by admission controller",
        "non-default classes are not checked",
        "updating the existing default itself is allowed",
        "unmarking the default is allowed",
        "updating the lowest of two racing defaults is allowed",
    ],
)
def test_priority_class_admission_allows(
    existing: list[PriorityClass], new: PriorityClass, operation: str
) -> None:
    """Upstream TestPriorityClassAdmission + validatePriorityClass's update rule."""
    validate_class(existing, new, operation)


@pytest.mark.parametrize(
    ("existing", "new", "operation", "message"),
    [
        (
            [DEFAULT1],
            DEFAULT2,
            "CREATE",
            'priorityclasses.scheduling.k8s.io "default2" is forbidden: PriorityClass default1 '
            "is already marked as default. Only one default can exist",
        ),
        (
            [DEFAULT1, NONDEFAULT1],
            dataclasses.replace(NONDEFAULT1, global_default=True),
            "UPDATE",
            'priorityclasses.scheduling.k8s.io "nondefault1" is forbidden: PriorityClass '
            "default1 is already marked as default. Only one default can exist",
        ),
        (
            [DEFAULT1],
            DEFAULT1,
            "CREATE",
            'priorityclasses.scheduling.k8s.io "default1" is forbidden: PriorityClass default1 '
            "is already marked as default. Only one default can exist",
        ),
        (
            [DEFAULT1, DEFAULT2],
            dataclasses.replace(DEFAULT2, description="x"),
            "UPDATE",
            'priorityclasses.scheduling.k8s.io "default2" is forbidden: PriorityClass default1 '
            "is already marked as default. Only one default can exist",
        ),
    ],
    ids=[
        "more than one default classes",
        "marking a different class default",
        "create over an existing default (AlreadyExists comes later)",
        "updating the higher of two racing defaults names the lowest",
    ],
)
def test_priority_class_admission_refuses_second_default(
    existing: list[PriorityClass], new: PriorityClass, operation: str, message: str
) -> None:
    """validatePriorityClass: only one globalDefault, on create and on update of another."""
    with pytest.raises(errors.ForbiddenError) as raised:
        validate_class(existing, new, operation)
    assert raised.value.message == message


def test_priority_class_delete_and_subresources_are_not_checked() -> None:
    _, listers = stored_listers(DEFAULT1)
    plugin = PriorityPlugin(listers)
    plugin.validate(admission_request(None, old=DEFAULT2, operation="DELETE"), AdmissionOutcome())
    plugin.validate(admission_request(DEFAULT2, subresource="status"), AdmissionOutcome())
