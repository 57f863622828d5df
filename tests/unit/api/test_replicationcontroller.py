"""ReplicationController defaulting, validation, strategy and Table with upstream texts.

Rules: ``pkg/apis/core/v1/defaults.go`` (``SetDefaults_ReplicationController``: selector
and labels from the template's labels, replicas 1), ``pkg/apis/core/validation/
validation.go`` (``ValidateReplicationControllerSpec``, ``ValidateNonEmptySelector``,
``ValidatePodTemplateSpecForRC``, ``ValidateReplicationControllerStatus``),
``pkg/registry/core/replicationcontroller/strategy.go`` (generation 1, an empty status
on create; ``status.replicas`` selectable), ``.../storage`` (``scaleFromRC``) and
``pkg/printers/internalversion/printers.go`` (``printReplicationController``).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubeprio.api import errors
from kubeprio.api.fields import field_getters
from kubeprio.api.model import evolve
from kubeprio.api.replicationcontroller import ReplicationController, ReplicationControllerStatus
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver import scale, workloadtables
from kubeprio.apiserver.service import ApiService
from tests.manifests import causes, create, rejected, template_doc, with_path

MISMATCH = "`selector` does not match template `labels`"


def rc_doc(name: str = "rc", **spec: Any) -> dict[str, Any]:
    """A minimal valid ReplicationController selecting ``app=web``."""
    return {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"app": "web"}, "template": template_doc(), **spec},
    }


def test_defaults_take_selector_and_labels_from_the_template(api: ApiService) -> None:
    doc = rc_doc()
    del doc["spec"]["selector"]
    stored = create(api, with_path(doc, "spec.template.metadata.labels", {"app": "web", "t": "1"}))
    assert stored.spec.selector == {"app": "web", "t": "1"}
    assert stored.metadata.labels == {"app": "web", "t": "1"}
    assert stored.spec.replicas == 1
    assert stored.metadata.generation == 1
    assert to_dict(stored.status) == {"replicas": 0}  # Go always writes replicas
    # The template got the pod-spec defaults every workload template gets.
    assert stored.spec.template.spec.restart_policy == "Always"
    assert stored.spec.template.spec.termination_grace_period_seconds == 30


def test_defaults_keep_what_is_given(api: ApiService) -> None:
    doc = rc_doc(replicas=0)
    doc["metadata"]["labels"] = {"own": "label"}
    stored = create(api, doc)
    assert stored.spec.selector == {"app": "web"}
    assert stored.metadata.labels == {"own": "label"}
    assert stored.spec.replicas == 0


RC_CASES: list[tuple[str, str, Any, list[str]]] = [
    (
        "missing selector and template labels",
        "spec.template.metadata.labels",
        None,
        ["spec.selector: Required value"],
    ),
    (
        "selector does not match template",
        "spec.template.metadata.labels",
        {"app": "db"},
        [f'spec.template.metadata.labels: Invalid value: {{"app":"db"}}: {MISMATCH}'],
    ),
    ("negative replicas", "spec.replicas", -1, ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]),
    ("negative minReadySeconds", "spec.minReadySeconds", -5, ["spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0"]),
    ("missing template", "spec.template", None, ["spec.template: Required value"]),
    (
        "restartPolicy Never",
        "spec.template.spec.restartPolicy",
        "Never",
        ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'],
    ),
    (
        "activeDeadlineSeconds",
        "spec.template.spec.activeDeadlineSeconds",
        10,
        ["spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicationController is not Supported"],
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("path", "value", "expected"), [c[1:] for c in RC_CASES], ids=[c[0] for c in RC_CASES]
)
def test_validation_texts(api: ApiService, path: str, value: Any, expected: list[str]) -> None:
    doc = with_path(rc_doc(), path, value)
    if path == "spec.template.metadata.labels" and value is None:
        del doc["spec"]["selector"]
    error = rejected(api, doc)
    assert causes(error) == expected
    assert str(error).startswith('ReplicationController "rc" is invalid: ')


def test_the_selector_may_change_on_update(api: ApiService) -> None:
    """Unlike apps/v1, a core/v1 selector is mutable (no immutability rule upstream)."""
    stored = create(api, rc_doc())
    labels = {"app": "web", "v": "2"}
    template = evolve(
        stored.spec.template, metadata=evolve(stored.spec.template.metadata, labels=labels)
    )
    updated = api.update_object(
        evolve(stored, spec=evolve(stored.spec, selector=labels, template=template))
    ).obj
    assert updated.spec.selector == labels
    assert updated.metadata.generation == 2


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        # Upstream compares the zero counts with the negative replicas too.
        ({"replicas": -1}, ["status.replicas: Invalid value: -1: must be greater than or equal to 0",
                            "status.fullyLabeledReplicas: Invalid value: 0: cannot be greater than status.replicas",
                            "status.readyReplicas: Invalid value: 0: cannot be greater than status.replicas",
                            "status.availableReplicas: Invalid value: 0: cannot be greater than status.replicas"]),
        ({"replicas": 1, "readyReplicas": 2, "availableReplicas": 2},
         ["status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas",
          "status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas"]),
        ({"replicas": 3, "readyReplicas": 1, "availableReplicas": 2},
         ["status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas"]),
    ],
)  # fmt: skip
def test_status_update_validation(
    api: ApiService, status: dict[str, Any], expected: list[str]
) -> None:
    stored = create(api, rc_doc())
    new = evolve(
        stored,
        status=ReplicationControllerStatus(
            replicas=status.get("replicas"),
            ready_replicas=status.get("readyReplicas"),
            available_replicas=status.get("availableReplicas"),
        ),
    )
    with pytest.raises(errors.InvalidError) as caught:
        api.update_object(new, subresource="status")
    assert causes(caught.value) == expected


def test_table_row_and_wide_cells(api: ApiService) -> None:
    stored = create(api, rc_doc(replicas=3))
    stored = evolve(stored, status=ReplicationControllerStatus(replicas=2, ready_replicas=1))
    cells, _ = workloadtables.print_replication_controller(stored, now=0.0)
    assert cells[:4] == ["rc", 3, 2, 1]
    assert cells[5:] == ["c", "nginx:1.27", "app=web"]
    names = [c.name for c in workloadtables.REPLICATION_CONTROLLER_COLUMNS]
    assert names == [
        "Name",
        "Desired",
        "Current",
        "Ready",
        "Age",
        "Containers",
        "Images",
        "Selector",
    ]


def test_scale_view_has_the_map_as_selector_string(api: ApiService) -> None:
    labels = {"b": "2", "a": "1"}
    doc = with_path(rc_doc(replicas=2), "spec.selector", labels)
    stored = create(api, with_path(doc, "spec.template.metadata.labels", labels))
    view = scale.scale_of(stored)
    assert (view.spec.replicas, view.status.replicas, view.status.selector) == (2, 0, "a=1,b=2")


def test_status_replicas_is_a_selectable_field(api: ApiService) -> None:
    stored = create(api, rc_doc())
    getters = field_getters(ReplicationController)
    assert sorted(getters) == ["metadata.name", "metadata.namespace", "status.replicas"]
    assert getters["status.replicas"](stored) == "0"
