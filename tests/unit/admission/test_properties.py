"""Property tests for admission (issue 2 "Done when").

* idempotence: admitting an admitted pod changes nothing (upstream runs every
  admission test through ``admissiontesting.WithReinvocationTesting``);
* the resolved priority always equals the value of the resolved class (the global
  default's or the tenant default's included), and the policy its policy;
* malformed or refused input never changes the store: the revision after a rejected
  write is the revision before it.
"""

from __future__ import annotations

import copy
import dataclasses
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubeprio.admission.chain import AdmissionOutcome
from kubeprio.admission.defaults import default_chain
from kubeprio.api import errors
from kubeprio.api.core import Namespace, Pod, PodSpec
from kubeprio.api.manifest import Document, ManifestError, parse_text
from kubeprio.api.meta import ObjectMeta
from kubeprio.api.scheduling import PriorityClass
from kubeprio.api.tenant import Tenant, TenantPriorityClasses, TenantSpec
from kubeprio.apiserver.listers import StoreListers
from kubeprio.apiserver.service import ApiService
from kubeprio.cli.check import apply_document
from kubeprio.store.memory import MemoryStore
from tests.builders import admission_request, pod
from tests.conftest import ManualClock

CLASS_NAMES = ("alpha", "beta", "gamma", "delta")
POLICIES = ("PreemptLowerPriority", "Never")

class_specs = st.lists(
    st.tuples(
        st.sampled_from(CLASS_NAMES),
        st.integers(min_value=-(2**31), max_value=1_000_000_000),
        st.sampled_from(POLICIES),
        st.booleans(),
    ),
    max_size=4,
    unique_by=lambda spec: spec[0],
)
tenant_specs = st.none() | st.fixed_dictionaries(
    {
        "allowed": st.none() | st.lists(st.sampled_from(CLASS_NAMES), unique=True).map(tuple),
        "default": st.none() | st.sampled_from(CLASS_NAMES),
        "max_value": st.none() | st.integers(min_value=-10, max_value=2_000_000_000),
    }
)
pod_specs = st.fixed_dictionaries(
    {
        "namespace": st.sampled_from(("team-a", "elsewhere")),
        "class_name": st.none() | st.sampled_from((*CLASS_NAMES, "missing")),
        "priority": st.none() | st.integers(min_value=-(2**31), max_value=2**31 - 1),
        "policy": st.none() | st.sampled_from(POLICIES),
    }
)


def build_api(
    classes: list[tuple[str, int, str, bool]], tenant: dict[str, Any] | None
) -> ApiService:
    """An API with ``classes`` stored as given (several defaults may race in) and a tenant."""
    store = MemoryStore()
    api = ApiService(
        store,
        clock=ManualClock(),
        rng=random.Random(0),
        admission=default_chain(StoreListers(store)),
        auto_create_namespaces=True,
    )
    from kubeprio.store.interface import ObjectKey

    for name, value, policy, global_default in classes:
        store.create(
            ObjectKey("priorityclasses", "", name),
            PriorityClass(
                metadata=ObjectMeta(name=name),
                value=value,
                preemption_policy=policy,
                global_default=global_default,
            ),
        )
    for namespace in ("team-a", "elsewhere"):
        api.create(Namespace(metadata=ObjectMeta(name=namespace)))
    if tenant is not None:
        default = tenant["default"]
        if (
            tenant["allowed"] is not None
            and default is not None
            and default not in tenant["allowed"]
        ):
            default = None  # validation refuses such a tenant
        store.create(
            ObjectKey("tenants", "", "t"),
            Tenant(
                metadata=ObjectMeta(name="t"),
                spec=TenantSpec(
                    namespaces=("team-a",),
                    priority_classes=TenantPriorityClasses(
                        allowed=tenant["allowed"], default=default, max_value=tenant["max_value"]
                    ),
                ),
            ),
        )
    return api


def new_pod(spec: dict[str, Any]) -> Pod:
    built = pod("p", spec["namespace"]).build()
    return dataclasses.replace(
        built,
        spec=dataclasses.replace(
            built.spec or PodSpec(),
            priority_class_name=spec["class_name"],
            priority=spec["priority"],
            preemption_policy=spec["policy"],
        ),
    )


def mutate(api: ApiService, obj: Pod) -> Pod:
    result = api.admission.mutate(admission_request(obj), AdmissionOutcome())
    assert isinstance(result, Pod)
    return result


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(classes=class_specs, tenant=tenant_specs, spec=pod_specs)
def test_admitting_an_admitted_pod_changes_nothing(
    classes: list[tuple[str, int, str, bool]], tenant: dict[str, Any] | None, spec: dict[str, Any]
) -> None:
    api = build_api(classes, tenant)
    try:
        first = mutate(api, new_pod(spec))
    except errors.StatusError:
        return
    assert mutate(api, first) == first


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(classes=class_specs, tenant=tenant_specs, spec=pod_specs)
def test_resolved_priority_equals_the_class_value(
    classes: list[tuple[str, int, str, bool]], tenant: dict[str, Any] | None, spec: dict[str, Any]
) -> None:
    api = build_api(classes, tenant)
    by_name = {name: (value, policy) for name, value, policy, _ in classes}
    try:
        created = api.create(new_pod(spec))
    except errors.StatusError:
        return
    assert isinstance(created, Pod)
    assert created.spec is not None
    name = created.spec.priority_class_name
    if name:
        assert (created.spec.priority, created.spec.preemption_policy) == by_name[name]
        if spec["class_name"] is None:
            defaults = sorted((v, n) for n, v, _, d in classes if d)
            tenant_default = (
                tenant is not None and spec["namespace"] == "team-a" and tenant["default"]
            )
            assert tenant_default or name == defaults[0][1]
    else:
        assert (created.spec.priority, created.spec.preemption_policy) == (
            0,
            "PreemptLowerPriority",
        )


VALID_POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "team-a"},
    "spec": {
        "priorityClassName": "alpha",
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m"}}}],
    },
}
VALID_CLASS: dict[str, Any] = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "epsilon"},
    "value": 10,
    "globalDefault": True,
}
CORRUPTIBLE = {
    "pod": (
        VALID_POD,
        [
            ("apiVersion",),
            ("kind",),
            ("metadata", "name"),
            ("metadata", "namespace"),
            ("spec", "priorityClassName"),
            ("spec", "priority"),
            ("spec", "preemptionPolicy"),
            ("spec", "containers"),
            ("spec", "containers", 0, "resources", "requests", "cpu"),
        ],
    ),
    "class": (
        VALID_CLASS,
        [
            ("apiVersion",),
            ("metadata", "name"),
            ("value",),
            ("globalDefault",),
            ("preemptionPolicy",),
            ("description",),
        ],
    ),
}
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**40), max_value=2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(
        ("system-x", "alpha", "fresh", "Never", "1x", "-1", "2000000001", "", "Tier&1", "gamma")
    ),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=6,
)


def corrupt(document: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(document)
    target: Any = data
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return data


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(
    which=st.sampled_from(sorted(CORRUPTIBLE)),
    index=st.integers(min_value=0, max_value=8),
    value=json_values,
    classes=class_specs,
    tenant=tenant_specs,
)
def test_rejected_input_never_changes_the_store(
    which: str,
    index: int,
    value: Any,
    classes: list[tuple[str, int, str, bool]],
    tenant: dict[str, Any] | None,
) -> None:
    api = build_api(classes, tenant)
    base, paths = CORRUPTIBLE[which]
    document = corrupt(base, paths[index % len(paths)], value)
    revision = api.store.current_revision()
    result = apply_document(api, Document("input.yaml", 0, document))
    if not result.allowed:
        assert result.code in (400, 403, 404, 409, 422)
        assert api.store.current_revision() == revision
    else:
        assert api.store.current_revision() > revision


@settings(max_examples=200)
@given(text=st.text(max_size=200))
def test_any_text_parses_or_fails_cleanly(text: str) -> None:
    """Arbitrary input yields documents or a located ManifestError, never anything else."""
    try:
        documents = parse_text(text, "input.yaml")
    except ManifestError as exc:
        message = str(exc)
    else:
        assert all(isinstance(d.data, dict) for d in documents)
        return
    assert message.startswith("input.yaml")
