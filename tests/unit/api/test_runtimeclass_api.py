"""RuntimeClass and PodTemplate through the API service, without admission.

Upstream v1.32: ``pkg/apis/node/validation/validation.go`` (``ValidateRuntimeClass``,
``ValidateRuntimeClassUpdate``, ``validateOverhead``, ``validateScheduling``,
``validateTolerations``), ``pkg/registry/node/runtimeclass/strategy.go`` (update runs
both), ``pkg/apis/core/validation/validation.go`` (``ValidatePodTemplate``,
``ValidatePodTemplateUpdate``, ``ValidateRuntimeClassName`` in ``ValidatePodSpec``),
``pkg/registry/core/podtemplate/strategy.go`` (generation), and the Table cells of
``pkg/printers/internalversion/printers.go`` (``printRuntimeClass``, ``printPodTemplate``).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import kinds, serialization
from kubeprio.api.core import Pod
from kubeprio.api.errors import InvalidError
from kubeprio.api.model import evolve
from kubeprio.api.podtemplate import PodTemplate
from kubeprio.api.runtimeclass import RuntimeClass
from kubeprio.apiserver import runtimeclasstables, workloadtables
from kubeprio.apiserver.service import ApiService
from kubeprio.clock import parse_rfc3339

NOW = parse_rfc3339("2026-01-01T01:00:00Z")
LABEL_ERROR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def rc(name: str = "gvisor", **fields: Any) -> RuntimeClass:
    return serialization.from_dict(
        RuntimeClass, {"metadata": {"name": name}, "handler": "runsc", **fields}
    )


def template(name: str = "web", **template_fields: Any) -> PodTemplate:
    body = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
        **template_fields,
    }
    return serialization.from_dict(
        PodTemplate, {"metadata": {"name": name, "namespace": "default"}, "template": body}
    )


def causes(exc: InvalidError) -> list[str]:
    details = exc.status.details
    assert details is not None
    return [f"{c.field}: {c.message}" for c in details.causes or ()]


def invalid(api: ApiService, obj: object) -> InvalidError:
    with pytest.raises(InvalidError) as caught:
        api.create(obj)
    return caught.value


# --- RuntimeClass -------------------------------------------------------------------------------


def test_a_runtime_class_round_trips_and_is_cluster_scoped(api: ApiService) -> None:
    body = {
        "overhead": {"podFixed": {"cpu": "250m", "memory": "120Mi"}},
        "scheduling": {
            "nodeSelector": {"sandbox": "gvisor"},
            "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }
    created = api.create(rc(**body))
    data = serialization.to_dict(created)
    assert {k: data[k] for k in ("apiVersion", "kind", "handler", *body)} == {
        "apiVersion": "node.k8s.io/v1",
        "kind": "RuntimeClass",
        "handler": "runsc",
        **body,
    }
    info = kinds.for_name("runtimeclasses")
    assert (info.group, info.namespaced, info.kind) == ("node.k8s.io", False, "RuntimeClass")
    assert kinds.for_kind("node.k8s.io/v1beta1", "RuntimeClass") is info


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"handler": "Run_SC"}, [f'handler: Invalid value: "Run_SC": {LABEL_ERROR}']),
        ({"handler": "a.b"}, ['handler: Invalid value: "a.b": must not contain dots']),
        # No handler: Go's zero "" (no omitempty), which is not a DNS label.
        ({"handler": None}, [f'handler: Invalid value: "": {LABEL_ERROR}']),
        (
            {"overhead": {"podFixed": {"cpu": "-1"}}},
            ['overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0'],
        ),
        (
            {"overhead": {"podFixed": {"bogus": "1"}}},
            ['overhead.limits[bogus]: Invalid value: "bogus": must be a standard resource type or fully qualified',
             'overhead.limits[bogus]: Invalid value: "bogus": must be a standard resource for containers'],
        ),
        (
            {"scheduling": {"nodeSelector": {"bad key!": "v"}}},
            ["scheduling.nodeSelector: Invalid value: \"bad key!\": name part must consist of alphanumeric "
             "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
             "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"],
        ),
        (
            # v1.32's validateTolerations passes the child path again: tolerations.tolerations.
            {"scheduling": {"tolerations": [{"operator": "Equal", "value": "x"}]}},
            ['scheduling.tolerations.tolerations[0].operator: Invalid value: "Equal": operator must be '
             'Exists when `key` is empty, which means "match all values and all keys"'],
        ),
        (
            {"scheduling": {"tolerations": [
                {"key": "a", "operator": "Equal", "value": "b", "effect": "NoSchedule"},
                {"key": "a", "operator": "Equal", "value": "b", "effect": "NoSchedule"},
            ]}},
            ['scheduling.tolerations[1]: Duplicate value: core.Toleration{Key:"a", Operator:"Equal", '
             'Value:"b", Effect:"NoSchedule", TolerationSeconds:(*int64)(nil)}'],
        ),
    ],
    ids=["handler-not-label", "handler-dots", "handler-missing", "overhead-negative",
         "overhead-unknown-name", "selector-key", "toleration-path", "toleration-duplicate"],
)  # fmt: skip
def test_runtime_class_validation(
    api: ApiService, fields: dict[str, Any], expected: list[str]
) -> None:
    exc = invalid(api, rc(**fields))
    assert causes(exc) == expected
    assert exc.message.startswith('RuntimeClass.node.k8s.io "gvisor" is invalid: ')
    assert api.list(RuntimeClass).items == []


def test_the_handler_is_immutable_and_the_create_rules_rerun(api: ApiService) -> None:
    created = api.create(rc())
    with pytest.raises(InvalidError) as caught:
        api.update(evolve(created, handler="kata"))
    assert causes(caught.value) == ['handler: Invalid value: "kata": field is immutable']
    with pytest.raises(InvalidError) as caught:
        api.update(evolve(created, overhead=rc(overhead={"podFixed": {"cpu": "-1"}}).overhead))
    assert causes(caught.value) == [
        'overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0'
    ]
    updated = api.update(
        evolve(created, scheduling=rc(scheduling={"nodeSelector": {"a": "b"}}).scheduling)
    )
    assert updated.scheduling is not None
    assert dict(updated.scheduling.node_selector or {}) == {"a": "b"}


def test_runtime_class_row() -> None:
    row = rc(
        metadata={"name": "kata", "creationTimestamp": "2026-01-01T00:00:00Z"}, handler="kata-qemu"
    )
    cells, _ = runtimeclasstables.print_runtime_class(row, NOW)
    assert cells == ["kata", "kata-qemu", "60m"]
    assert [c.name for c in runtimeclasstables.RUNTIME_CLASS_COLUMNS] == ["Name", "Handler", "Age"]
    # Upstream reads the description from ObjectMeta's docs, which have no "handler".
    assert runtimeclasstables.RUNTIME_CLASS_COLUMNS[1].description == ""


# --- the pod's runtimeClassName -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("gvisor", []),
        ("Kata", ["spec.runtimeClassName: Invalid value: \"Kata\": a lowercase RFC 1123 subdomain must consist of "
                  "lower case alphanumeric characters, '-' or '.', and must start and end with an "
                  "alphanumeric character (e.g. 'example.com', regex used for validation is "
                  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]),
    ],
)  # fmt: skip
def test_a_pod_runtime_class_name_is_a_dns_subdomain(
    api: ApiService, name: str, expected: list[str]
) -> None:
    pod = serialization.from_dict(
        Pod,
        {
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {"runtimeClassName": name, "containers": [{"name": "a", "image": "x"}]},
        },
    )
    if not expected:
        assert api.create(pod).spec.runtime_class_name == name
        return
    assert causes(invalid(api, pod)) == expected


# --- PodTemplate --------------------------------------------------------------------------------


def test_a_pod_template_is_defaulted_and_counts_template_changes(api: ApiService) -> None:
    created = api.create(template())
    spec = serialization.to_dict(created)["template"]["spec"]
    assert spec["restartPolicy"] == "Always"
    assert spec["containers"][0]["imagePullPolicy"] == "Always"
    assert created.metadata.generation == 1
    relabelled = api.update(evolve(created, metadata=evolve(created.metadata, labels={"x": "y"})))
    assert relabelled.metadata.generation == 1
    assert created.template is not None
    assert created.template.metadata is not None
    new_template = evolve(
        created.template, metadata=evolve(created.template.metadata, labels={"app": "web2"})
    )
    changed = api.update(evolve(relabelled, template=new_template))
    assert changed.metadata.generation == 2


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"spec": {"containers": []}}, ["template.spec.containers: Required value"]),
        (
            {"metadata": {"labels": {"app": "-bad"}}},
            ["template.labels: Invalid value: \"-bad\": a valid label must be an empty string or consist of "
             "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
             "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
             "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"],
        ),
    ],
    ids=["no-containers", "bad-label"],
)  # fmt: skip
def test_pod_template_validation(
    api: ApiService, fields: dict[str, Any], expected: list[str]
) -> None:
    exc = invalid(api, template(**fields))
    assert causes(exc) == expected
    assert exc.message.startswith('PodTemplate "web" is invalid: ')


def test_a_pod_template_update_revalidates_the_template(api: ApiService) -> None:
    created = api.create(template())
    assert created.template is not None
    assert created.template.spec is not None
    emptied = evolve(created.template, spec=evolve(created.template.spec, containers=()))
    with pytest.raises(InvalidError) as caught:
        api.update(evolve(created, template=emptied))
    assert causes(caught.value) == ["template.spec.containers: Required value"]


def test_pod_template_row() -> None:
    two = template(
        spec={
            "containers": [{"name": "app", "image": "nginx"}, {"name": "log", "image": "busybox"}]
        },
        metadata={"labels": {"tier": "web", "app": "shop"}},
    )
    cells, _ = workloadtables.print_pod_template(two, NOW)
    assert cells == ["web", "app,log", "nginx,busybox", "app=shop,tier=web"]
    bare = template(metadata={})
    assert workloadtables.print_pod_template(bare, NOW)[0][3] == "<none>"
    assert [c.name for c in workloadtables.POD_TEMPLATE_COLUMNS] == [
        "Name", "Containers", "Images", "Pod Labels",
    ]  # fmt: skip
