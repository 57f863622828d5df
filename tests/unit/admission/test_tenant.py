"""Tenant priority-class allowlists (issue 2 section 5, the model of seed 004).

kubeprio's own rules (there is no upstream plugin; the shape follows Capsule's
``priorityClasses`` allowlist). Tests run the whole write path with the default
admission chain, so they also pin the plugin order: tenant defaulting before Priority
resolution, allowlist enforcement after it.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from kubeprio.admission.defaults import default_chain
from kubeprio.admission.tenant import owning_tenant
from kubeprio.api import errors
from kubeprio.api.apps import Deployment, DeploymentSpec, ReplicaSet, ReplicaSetSpec
from kubeprio.api.batch import CronJob, CronJobSpec, Job, JobSpec, JobTemplateSpec
from kubeprio.api.core import Event, Namespace, Pod, PodSpec, PodTemplateSpec
from kubeprio.api.daemonset import DaemonSet, DaemonSetSpec
from kubeprio.api.meta import LabelSelector, LabelSelectorRequirement, ObjectMeta
from kubeprio.api.tenant import Tenant, TenantPriorityClasses, TenantSpec
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.builders import pod, priority_class
from tests.conftest import ManualClock

USER_CLASSES = ("uber-user-significant", "uber-user-preempt-medium", "uber-user-preempt-high")
ALLOWED_TEXT = "allowed: uber-user-preempt-high, uber-user-preempt-medium, uber-user-significant"


def kestrel(**changes: Any) -> Tenant:
    """The seed-004 tenant; ``changes`` replace fields of its priorityClasses."""
    classes = TenantPriorityClasses(allowed=USER_CLASSES, default="uber-user-significant")
    spec_changes = {
        k: changes.pop(k) for k in ("namespaces", "selector", "enforcement") if k in changes
    }
    return Tenant(
        metadata=ObjectMeta(name="kestrel"),
        spec=TenantSpec(
            namespaces=spec_changes.get("namespaces", ("team-a",)),
            namespace_selector=spec_changes.get("selector"),
            enforcement=spec_changes.get("enforcement"),
            priority_classes=dataclasses.replace(classes, **changes),
        ),
    )


@pytest.fixture
def kapi(clock: ManualClock) -> ApiService:
    """An API with the default chain and the seed-004 classes (no tenant yet)."""
    store = MemoryStore()
    api = ApiService(
        store,
        clock=clock,
        rng=random.Random(7),
        admission=default_chain(StoreListers(store)),
        auto_create_namespaces=True,
    )
    for name, value, policy in (
        ("uber-user-significant", 500, "Never"),
        ("uber-user-preempt-medium", 1000, None),
        ("uber-user-preempt-high", 2000, None),
        ("uber-user-important", 1500, None),
        ("uber-infra-critical", 900_001_000, None),
    ):
        api.create(priority_class(name, value, policy=policy))
    for name, labels in (("team-a", None), ("team-b", {"tenant": "kestrel"}), ("infra", None)):
        api.create(Namespace(metadata=ObjectMeta(name=name, labels=labels)))
    return api


def triple(obj: Pod) -> tuple[str | None, int | None, str | None]:
    spec = obj.spec or PodSpec()
    return spec.priority_class_name, spec.priority, spec.preemption_policy


def create_pod(api: ApiService, obj: Pod) -> Pod:
    result = api.create(obj)
    assert isinstance(result, Pod)
    return result


# --- ownership ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tenant_changes", "namespace", "owned"),
    [
        ({}, "team-a", True),
        ({}, "team-b", False),
        (
            {"namespaces": None, "selector": LabelSelector(match_labels={"tenant": "kestrel"})},
            "team-b",
            True,
        ),
        (
            {"namespaces": None, "selector": LabelSelector(match_labels={"tenant": "kestrel"})},
            "team-a",
            False,
        ),
        (
            {
                "namespaces": None,
                "selector": LabelSelector(
                    match_expressions=(LabelSelectorRequirement(key="tenant", operator="Exists"),)
                ),
            },
            "team-b",
            True,
        ),
        ({"namespaces": None, "selector": LabelSelector()}, "infra", True),
        ({"namespaces": None, "selector": None}, "team-a", False),
    ],
    ids=[
        "listed namespace",
        "unlisted namespace",
        "selected by labels",
        "not selected",
        "selected by expression",
        "empty selector selects every namespace",
        "no list and no selector owns nothing",
    ],
)
def test_tenant_owns_namespaces_by_list_or_selector(
    kapi: ApiService, tenant_changes: dict[str, Any], namespace: str, owned: bool
) -> None:
    kapi.create(kestrel(**tenant_changes))
    found = owning_tenant(kapi.listers, namespace)
    assert (found is not None) == owned


def test_first_tenant_by_name_wins_when_ownership_overlaps(kapi: ApiService) -> None:
    kapi.create(dataclasses.replace(kestrel(), metadata=ObjectMeta(name="zebra")))
    kapi.create(dataclasses.replace(kestrel(), metadata=ObjectMeta(name="alpha")))
    found = owning_tenant(kapi.listers, "team-a")
    assert found is not None
    assert found.metadata.name == "alpha"


# --- defaulting -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("global_default", "obj", "expected"),
    [
        (False, pod("p", "team-a").build(), ("uber-user-significant", 500, "Never")),
        (True, pod("p", "team-a").build(), ("uber-user-significant", 500, "Never")),
        (True, pod("p", "infra").build(), ("cluster-default", 100, "PreemptLowerPriority")),
        (
            False,
            pod("p", "team-a").priority_class("uber-user-preempt-high").build(),
            ("uber-user-preempt-high", 2000, "PreemptLowerPriority"),
        ),
        (
            False,
            pod("p", "team-a").priority(500).preemption_policy("Never").build(),
            ("uber-user-significant", 500, "Never"),
        ),
    ],
    ids=[
        "tenant default fills class, priority and policy together",
        "tenant default applies before the global default",
        "outside the tenant the global default applies",
        "a named class is kept",
        "values equal to the default class are accepted",
    ],
)
def test_tenant_default(
    kapi: ApiService, global_default: bool, obj: Pod, expected: tuple[str, int, str]
) -> None:
    if global_default:
        kapi.create(priority_class("cluster-default", 100, global_default=True))
    kapi.create(kestrel())
    assert triple(create_pod(kapi, obj)) == expected


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        (
            pod("copied", "team-a").priority(0).build(),
            'pods "copied" is forbidden: the integer value of priority (0) must not be provided '
            "in pod spec; priority admission controller computed 500 from the given "
            "PriorityClass name",
        ),
        (
            pod("eager", "team-a").preemption_policy("PreemptLowerPriority").build(),
            'pods "eager" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) '
            "must not be provided in pod spec; priority admission controller computed Never "
            "from the given PriorityClass name",
        ),
    ],
    ids=[
        "priority conflicting with the default class",
        "policy conflicting with the default class",
    ],
)
def test_tenant_default_keeps_priority_rules(kapi: ApiService, obj: Pod, message: str) -> None:
    """The rewritten pod must still satisfy Priority's rules: conflicts are refused."""
    kapi.create(kestrel())
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.create(obj)
    assert raised.value.message == message


def test_missing_default_class_is_reported_by_priority(kapi: ApiService) -> None:
    kapi.create(kestrel(allowed=None, default="not-created-yet"))
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.create(pod("p", "team-a").build())
    assert raised.value.message == (
        'pods "p" is forbidden: no PriorityClass with name not-created-yet was found'
    )


# --- the allowlist ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tenant_changes", "class_name", "message"),
    [
        (
            {},
            "uber-infra-critical",
            'pods "p" is forbidden: PriorityClass "uber-infra-critical" is not allowed in '
            f'namespace "team-a" (tenant "kestrel"); {ALLOWED_TEXT}',
        ),
        (
            {},
            "uber-user-important",
            'pods "p" is forbidden: PriorityClass "uber-user-important" is not allowed in '
            f'namespace "team-a" (tenant "kestrel"); {ALLOWED_TEXT}',
        ),
        (
            {"allowed": None, "allowed_regex": "user", "default": None},
            "uber-user-important",
            'pods "p" is forbidden: PriorityClass "uber-user-important" is not allowed in '
            'namespace "team-a" (tenant "kestrel"); allowed: names matching "user"',
        ),
        (
            {"allowed": ("uber-user-significant",), "allowed_regex": "uber-user-preempt-.*"},
            "uber-infra-critical",
            'pods "p" is forbidden: PriorityClass "uber-infra-critical" is not allowed in '
            'namespace "team-a" (tenant "kestrel"); allowed: uber-user-significant, '
            'names matching "uber-user-preempt-.*"',
        ),
        (
            {"allowed": (), "default": None},
            "uber-user-significant",
            'pods "p" is forbidden: PriorityClass "uber-user-significant" is not allowed in '
            'namespace "team-a" (tenant "kestrel"); allowed: none',
        ),
        (
            {"allowed": None, "default": None, "max_value": 1000},
            "uber-user-preempt-high",
            'pods "p" is forbidden: priority 2000 of PriorityClass "uber-user-preempt-high" '
            'exceeds the maximum 1000 allowed in namespace "team-a" (tenant "kestrel")',
        ),
    ],
    ids=[
        "platform class",
        "cluster class outside the allowlist",
        "regex is anchored: it must match the whole name",
        "names and regex are listed together",
        "empty allowlist allows no class",
        "maxValue is a ceiling on the resolved priority",
    ],
)
def test_pod_outside_the_allowlist_is_forbidden(
    kapi: ApiService, tenant_changes: dict[str, Any], class_name: str, message: str
) -> None:
    kapi.create(kestrel(**tenant_changes))
    revision = kapi.store.current_revision()
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.create(pod("p", "team-a").priority_class(class_name).build())
    assert raised.value.message == message
    assert raised.value.status.code == 403
    assert kapi.store.current_revision() == revision


@pytest.mark.parametrize(
    ("tenant_changes", "class_name", "namespace"),
    [
        ({}, "uber-user-preempt-medium", "team-a"),
        ({"allowed": None, "allowed_regex": "uber-user-.*"}, "uber-user-important", "team-a"),
        ({"allowed": None, "default": None, "max_value": 2000}, "uber-user-preempt-high", "team-a"),
        ({}, "uber-infra-critical", "infra"),
        ({"allowed": None, "default": None}, "uber-infra-critical", "team-a"),
        ({"allowed": (), "default": None}, None, "team-a"),
    ],
    ids=[
        "listed class",
        "class matching the regex",
        "priority equal to maxValue",
        "namespace outside the tenant",
        "no allowlist means any class",
        "a pod with no class at all uses none",
    ],
)
def test_pod_inside_the_allowlist_is_admitted(
    kapi: ApiService, tenant_changes: dict[str, Any], class_name: str | None, namespace: str
) -> None:
    kapi.create(kestrel(**tenant_changes))
    builder = pod("p", namespace)
    if class_name:
        builder = builder.priority_class(class_name)
    create_pod(kapi, builder.build())


def test_global_default_outside_the_allowlist_is_forbidden(kapi: ApiService) -> None:
    """The allowlist checks the class Priority resolved, a global default included."""
    kapi.create(priority_class("cluster-default", 100, global_default=True))
    kapi.create(kestrel(default=None))
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.create(pod("p", "team-a").build())
    assert raised.value.message.startswith(
        'pods "p" is forbidden: PriorityClass "cluster-default" is not allowed'
    )


def test_audit_mode_admits_with_a_warning_and_an_event(kapi: ApiService) -> None:
    kapi.create(kestrel(enforcement="Audit"))
    result = kapi.create_object(pod("p", "team-a").priority_class("uber-infra-critical").build())
    detail = (
        'PriorityClass "uber-infra-critical" is not allowed in namespace "team-a" '
        f'(tenant "kestrel"); {ALLOWED_TEXT}'
    )
    assert result.warnings == (f"{detail} (admitted: tenant enforcement is Audit)",)
    assert triple(result.obj) == ("uber-infra-critical", 900_001_000, "PreemptLowerPriority")
    events = kapi.list(Event, "team-a").items
    assert len(events) == 1
    event = events[0]
    assert (event.type, event.reason, event.message) == (
        "Warning",
        "PriorityClassNotAllowed",
        detail,
    )
    assert event.involved_object is not None
    assert (event.involved_object.kind, event.involved_object.name) == ("Pod", "p")
    assert event.involved_object.uid == result.obj.metadata.uid
    assert event.first_timestamp == "2026-01-01T00:00:00Z"
    assert event.count == 1


def test_dry_run_records_no_event(kapi: ApiService) -> None:
    kapi.create(kestrel(enforcement="Audit"))
    kapi.create_object(
        pod("p", "team-a").priority_class("uber-infra-critical").build(), dry_run=True
    )
    assert kapi.list(Event, "team-a").items == []


def test_pod_updates_are_not_rechecked(kapi: ApiService) -> None:
    """Only creation is checked: tightening a tenant does not freeze existing pods."""
    created = create_pod(kapi, pod("p", "team-a").priority_class("uber-infra-critical").build())
    kapi.create(kestrel())
    labelled = dataclasses.replace(
        created, metadata=dataclasses.replace(created.metadata, labels={"x": "y"})
    )
    kapi.update(labelled)


# --- workloads -----------------------------------------------------------------------------------


def template(class_name: str | None, restart_policy: str | None = None) -> PodTemplateSpec:
    spec = pod("t", "team-a").build().spec
    assert spec is not None
    return PodTemplateSpec(
        metadata=ObjectMeta(labels={"app": "w"}),
        spec=dataclasses.replace(
            spec, priority_class_name=class_name, restart_policy=restart_policy
        ),
    )


def selector() -> LabelSelector:
    return LabelSelector(match_labels={"app": "w"})


def workload(kind: str, class_name: str | None, namespace: str = "team-a") -> Any:
    meta = ObjectMeta(name="w", namespace=namespace)
    if kind == "Deployment":
        return Deployment(
            metadata=meta, spec=DeploymentSpec(selector=selector(), template=template(class_name))
        )
    if kind == "ReplicaSet":
        return ReplicaSet(
            metadata=meta, spec=ReplicaSetSpec(selector=selector(), template=template(class_name))
        )
    if kind == "DaemonSet":
        return DaemonSet(
            metadata=meta, spec=DaemonSetSpec(selector=selector(), template=template(class_name))
        )
    if kind == "CronJob":
        # The pod template sits in spec.jobTemplate.spec.template (ValidateJobTemplateSpec).
        job_template = JobTemplateSpec(spec=JobSpec(template=template(class_name, "Never")))
        return CronJob(
            metadata=meta, spec=CronJobSpec(schedule="@hourly", job_template=job_template)
        )
    # A Job's pods must not restart in place (ValidateJobSpec: OnFailure or Never).
    return Job(metadata=meta, spec=JobSpec(template=template(class_name, "Never")))


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
def test_workload_with_a_forbidden_template_class_is_refused_at_create(
    kapi: ApiService, kind: str, resource: str
) -> None:
    kapi.create(kestrel())
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.create(workload(kind, "uber-infra-critical"))
    assert raised.value.message == (
        f'{resource} "w" is forbidden: pod template: PriorityClass "uber-infra-critical" is not '
        f'allowed in namespace "team-a" (tenant "kestrel"); {ALLOWED_TEXT}'
    )


# Not a Job: its pod template is immutable (ValidateJobSpecUpdate in
# pkg/apis/batch/validation/validation.go), so validation refuses the edit first.
@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "DaemonSet"])
def test_workload_update_to_a_forbidden_class_is_refused(kapi: ApiService, kind: str) -> None:
    kapi.create(kestrel())
    created = kapi.create(workload(kind, "uber-user-preempt-high"))
    # The user edits only the class in the stored (defaulted) template.
    stored = created.spec.template
    changed_template = dataclasses.replace(
        stored, spec=dataclasses.replace(stored.spec, priority_class_name="uber-user-important")
    )
    changed = dataclasses.replace(
        created, spec=dataclasses.replace(created.spec, template=changed_template)
    )
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.update(changed)
    assert (
        'pod template: PriorityClass "uber-user-important" is not allowed' in raised.value.message
    )


@pytest.mark.parametrize(
    ("class_name", "namespace", "tenant_changes"),
    [
        ("uber-user-preempt-high", "team-a", {}),
        (None, "team-a", {}),
        ("uber-infra-critical", "infra", {}),
        ("not-created-yet", "team-a", {"allowed": None}),
    ],
    ids=[
        "allowed class",
        "no class: the tenant default is allowed",
        "outside the tenant",
        "unknown class is Priority's business when the pod is created",
    ],
)
def test_workload_with_an_allowed_template_is_admitted(
    kapi: ApiService, class_name: str | None, namespace: str, tenant_changes: dict[str, Any]
) -> None:
    kapi.create(kestrel(**tenant_changes))
    created = kapi.create(workload("Deployment", class_name, namespace))
    # The template is not mutated: pods get their class when they are created.
    assert created.spec.template.spec.priority_class_name == class_name


def test_workload_max_value_uses_the_template_class(kapi: ApiService) -> None:
    kapi.create(kestrel(allowed=None, default=None, max_value=1000))
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.create(workload("Job", "uber-user-preempt-high"))
    assert raised.value.message == (
        'jobs.batch "w" is forbidden: pod template: priority 2000 of PriorityClass '
        '"uber-user-preempt-high" exceeds the maximum 1000 allowed in namespace "team-a" '
        '(tenant "kestrel")'
    )


def test_workload_in_audit_mode_is_admitted_with_warning_and_event(kapi: ApiService) -> None:
    kapi.create(kestrel(enforcement="Audit"))
    result = kapi.create_object(workload("Deployment", "uber-infra-critical"))
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith('pod template: PriorityClass "uber-infra-critical"')
    events = kapi.list(Event, "team-a").items
    assert [(e.reason, e.involved_object.kind) for e in events if e.involved_object] == [
        ("PriorityClassNotAllowed", "Deployment")
    ]


def test_status_subresource_writes_are_not_checked(kapi: ApiService) -> None:
    created = kapi.create(workload("Deployment", "uber-infra-critical"))
    kapi.create(kestrel())
    kapi.update_status(created)


def test_cron_job_update_to_a_forbidden_class_is_refused(kapi: ApiService) -> None:
    """A CronJob's job template may change (unlike a Job's pod template), and each change
    is admitted like a Deployment's: the class of the template under spec.jobTemplate."""
    kapi.create(kestrel())
    created = kapi.create(workload("CronJob", "uber-user-preempt-high"))
    job_spec = created.spec.job_template.spec
    changed_template = dataclasses.replace(
        job_spec.template,
        spec=dataclasses.replace(job_spec.template.spec, priority_class_name="uber-user-important"),
    )
    changed = dataclasses.replace(
        created,
        spec=dataclasses.replace(
            created.spec,
            job_template=dataclasses.replace(
                created.spec.job_template,
                spec=dataclasses.replace(job_spec, template=changed_template),
            ),
        ),
    )
    with pytest.raises(errors.ForbiddenError) as raised:
        kapi.update(changed)
    assert raised.value.message.startswith(
        'cronjobs.batch "w" is forbidden: pod template: PriorityClass "uber-user-important" '
        "is not allowed"
    )
