"""Ephemeral containers: validation and the ``ephemeralcontainers`` strategy.

Upstream (``pkg/apis/core/validation/validation.go``, v1.32): ``validateEphemeralContainers``
(run by ``ValidatePodSpec``), ``ValidatePodCreate`` (none on create),
``ValidatePodTemplateSpec`` (none in a template), ``ValidatePodUpdate`` (a main update may
not change them: the pod-spec diff error), ``ValidatePodEphemeralContainersUpdate``
(existing ones may not be removed or changed, static pods refused); the strategy is
``podEphemeralContainersStrategy`` in ``pkg/registry/core/pod/strategy.go``. Case names
follow ``TestValidateEphemeralContainers`` and ``TestValidatePodEphemeralContainersUpdate``
in ``validation_test.go``. Writes go through ``ApiService`` (defaulting first, as on a
real server) and a refused write stores nothing.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeprio.api import errors, manifest
from kubeprio.api.core import Pod
from kubeprio.api.patch import PatchType
from kubeprio.api.serialization import to_dict
from kubeprio.apiserver.service import ApiService
from tests.manifests import causes, create, deployment_doc, pod_doc, rejected

EPHEMERAL = "ephemeralcontainers"
EC0 = "spec.ephemeralContainers[0]"
NOT_FOR_EPHEMERAL = "Forbidden: cannot be set for an Ephemeral Container"
DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def debugger(**fields: Any) -> dict[str, Any]:
    """What ``kubectl debug`` builds (``generateDebugContainer``), plus ``fields``."""
    return {"name": "debugger", "image": "busybox", "terminationMessagePolicy": "File", **fields}


def add(
    api: ApiService,
    *containers: dict[str, Any],
    patch_type: PatchType = PatchType.STRATEGIC_MERGE_PATCH,
    subresource: str = EPHEMERAL,
    name: str = "p",
) -> Pod:
    patch = {"spec": {"ephemeralContainers": list(containers)}}
    return api.patch_object(
        Pod, name, patch, namespace="default", patch_type=patch_type, subresource=subresource
    ).obj


def refused(api: ApiService, *containers: dict[str, Any], **kwargs: Any) -> list[str]:
    before = api.store.current_revision()
    with pytest.raises(errors.InvalidError) as caught:
        add(api, *containers, **kwargs)
    assert api.store.current_revision() == before
    return causes(caught.value)


@pytest.fixture
def pod(api: ApiService) -> Pod:
    doc = pod_doc()
    doc["spec"]["initContainers"] = [{"name": "init", "image": "busybox"}]
    return create(api, doc)  # type: ignore[no-any-return]


INVALID = [
    ("empty-name", debugger(name=""), [f"{EC0}.name: Required value"]),
    (
        "bad-name",
        debugger(name="Debugger"),
        [f'{EC0}.name: Invalid value: "Debugger": {DNS_LABEL}'],
    ),
    ("no-image", debugger(image=""), [f"{EC0}.image: Required value"]),
    (
        "image-whitespace",
        debugger(image=" busybox"),
        [f'{EC0}.image: Invalid value: " busybox": must not have leading or trailing whitespace'],
    ),
    (
        "name-of-a-container",
        debugger(name="c"),
        [f'{EC0}.name: Duplicate value: "c"'],
    ),
    (
        "name-of-an-init-container",
        debugger(name="init"),
        [f'{EC0}.name: Duplicate value: "init"'],
    ),
    (
        "unknown-target",
        debugger(targetContainerName="bogus"),
        [f'{EC0}.targetContainerName: Not found: "bogus"'],
    ),
    (
        "bad-pull-policy",
        debugger(imagePullPolicy="Sometimes"),
        [
            f'{EC0}.imagePullPolicy: Unsupported value: "Sometimes": supported values: '
            '"Always", "IfNotPresent", "Never"'
        ],
    ),
    ("ports", debugger(ports=[{"containerPort": 80}]), [f"{EC0}.ports: {NOT_FOR_EPHEMERAL}"]),
    (
        "resources",
        debugger(resources={"requests": {"cpu": "1"}}),
        [f"{EC0}.resources: {NOT_FOR_EPHEMERAL}"],
    ),
    (
        "empty-limits-are-set",
        debugger(resources={"limits": {}}),
        [f"{EC0}.resources: {NOT_FOR_EPHEMERAL}"],
    ),
    (
        "resize-policy",
        debugger(resizePolicy=[{"resourceName": "cpu", "restartPolicy": "NotRequired"}]),
        [f"{EC0}.resizePolicy: {NOT_FOR_EPHEMERAL}"],
    ),
    (
        "restart-policy",
        debugger(restartPolicy="Always"),
        [f"{EC0}.restartPolicy: {NOT_FOR_EPHEMERAL}"],
    ),
    (
        "probes-and-lifecycle",
        debugger(
            lifecycle={"preStop": {"exec": {"command": ["true"]}}},
            livenessProbe={"exec": {"command": ["true"]}},
            readinessProbe={"exec": {"command": ["true"]}},
            startupProbe={"exec": {"command": ["true"]}},
        ),
        # In EphemeralContainerCommon's field order (validateFieldAllowList walks it).
        [
            f"{EC0}.livenessProbe: {NOT_FOR_EPHEMERAL}",
            f"{EC0}.readinessProbe: {NOT_FOR_EPHEMERAL}",
            f"{EC0}.startupProbe: {NOT_FOR_EPHEMERAL}",
            f"{EC0}.lifecycle: {NOT_FOR_EPHEMERAL}",
        ],
    ),
    (
        "subpath",
        debugger(volumeMounts=[{"name": "v", "mountPath": "/v", "subPath": "x"}]),
        [f"{EC0}.volumeMounts[0].subPath: {NOT_FOR_EPHEMERAL}"],
    ),
    (
        "subpath-expr",
        debugger(volumeMounts=[{"name": "v", "mountPath": "/v", "subPathExpr": "$(X)"}]),
        [f"{EC0}.volumeMounts[0].subPathExpr: {NOT_FOR_EPHEMERAL}"],
    ),
]


@pytest.mark.parametrize(
    ("container", "expected"),
    [case[1:] for case in INVALID],
    ids=[case[0] for case in INVALID],
)
def test_invalid_ephemeral_container_is_refused_with_upstream_causes(
    api: ApiService, pod: Pod, container: dict[str, Any], expected: list[str]
) -> None:
    assert refused(api, container) == expected


def test_two_new_ephemeral_containers_may_not_share_a_name(api: ApiService, pod: Pod) -> None:
    # A merge patch keeps the list as sent (a strategic one would merge the two by name).
    found = refused(api, debugger(), debugger(), patch_type=PatchType.MERGE_PATCH)
    assert found == ['spec.ephemeralContainers[1].name: Duplicate value: "debugger"']


VALID = [
    ("kubectl-debug", debugger(stdin=True, tty=True, env=[{"name": "A", "value": "1"}])),
    ("target-container", debugger(targetContainerName="c")),
    ("target-init-container", debugger(targetContainerName="init")),
    ("empty-resources", debugger(resources={})),
    ("security-context", debugger(securityContext={"privileged": True})),
    ("command-and-args", debugger(command=["sh"], args=["-c", "true"], workingDir="/")),
]


@pytest.mark.parametrize("container", [case[1] for case in VALID], ids=[c[0] for c in VALID])
def test_valid_ephemeral_container_is_added_and_defaulted(
    api: ApiService, pod: Pod, container: dict[str, Any]
) -> None:
    """``SetDefaults_EphemeralContainer`` is ``SetDefaults_Container`` on the common fields."""
    stored = add(api, container)
    [added] = to_dict(stored.spec)["ephemeralContainers"]
    expected = {
        **container,
        "imagePullPolicy": "Always",
        "terminationMessagePath": "/dev/termination-log",
    }
    # ``resources`` is a struct upstream: served as ``{}`` when the request had none.
    expected.setdefault("resources", {})
    assert added == expected


def test_an_ephemeral_write_changes_only_ephemeral_containers(api: ApiService, pod: Pod) -> None:
    """``dropNonEphemeralContainerUpdates``: spec, status and metadata (labels and
    annotations included, ``ResetObjectMetaForStatus``) stay as stored."""
    doc = to_dict(pod)
    doc["metadata"]["labels"] = {"sneaky": "yes"}
    doc["spec"]["containers"][0]["image"] = "evil"
    doc["spec"]["activeDeadlineSeconds"] = 5
    doc["status"]["phase"] = "Failed"
    doc["spec"]["ephemeralContainers"] = [debugger()]
    stored = api.patch_object(
        Pod, "p", doc, namespace="default", patch_type=PatchType.MERGE_PATCH, subresource=EPHEMERAL
    ).obj
    before, after = to_dict(pod), to_dict(stored)
    [added] = after["spec"].pop("ephemeralContainers")
    assert added["name"] == "debugger"
    del before["metadata"]["resourceVersion"], after["metadata"]["resourceVersion"]
    assert after == before


def test_a_put_of_the_subresource_adds_a_container(api: ApiService, pod: Pod) -> None:
    current = api.get(Pod, "p", "default")
    doc = to_dict(current)
    doc["spec"]["ephemeralContainers"] = [debugger()]
    stored = api.update_object(manifest.decode_request(doc), subresource=EPHEMERAL).obj
    assert [c.name for c in stored.spec.ephemeral_containers] == ["debugger"]


UPDATES = [
    (
        "remove",
        PatchType.MERGE_PATCH,
        [],
        [
            'spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may '
            "not be removed\n"
        ],
    ),
    (
        "change-image",
        PatchType.STRATEGIC_MERGE_PATCH,
        [{"name": "debugger", "image": "alpine"}],
        [
            'spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may '
            "not be changed\n"
            "  core.EphemeralContainer{\n"
            "  \t... // 1 identical fields\n"
            '- \tImage: "busybox",\n'
            '+ \tImage: "alpine",\n'
            "  \t... // 3 identical fields\n"
            "  }\n"
        ],
    ),
]


@pytest.mark.parametrize(
    ("patch_type", "containers", "expected"),
    [case[1:] for case in UPDATES],
    ids=[case[0] for case in UPDATES],
)
def test_existing_ephemeral_containers_may_not_be_removed_or_changed(
    api: ApiService,
    pod: Pod,
    patch_type: PatchType,
    containers: list[dict[str, Any]],
    expected: list[str],
) -> None:
    add(api, debugger())
    assert refused(api, *containers, patch_type=patch_type) == expected


def test_reordering_ephemeral_containers_is_no_change(api: ApiService, pod: Pod) -> None:
    """Upstream matches them by name: a patch need not keep their order."""
    add(api, debugger(name="one"))
    add(api, debugger(name="two"))
    current = api.get(Pod, "p", "default")
    listed = [to_dict(c) for c in current.spec.ephemeral_containers]  # type: ignore[union-attr]
    stored = add(api, *reversed(listed), patch_type=PatchType.MERGE_PATCH)
    assert sorted(c.name or "" for c in stored.spec.ephemeral_containers) == ["one", "two"]  # type: ignore[union-attr]


def test_static_pods_take_no_ephemeral_containers(api: ApiService) -> None:
    doc = pod_doc()
    doc["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "hash"}
    doc["spec"]["nodeName"] = "n1"
    create(api, doc)
    assert refused(api, debugger()) == [
        ": Forbidden: static pods do not support ephemeral containers"
    ]


def test_ephemeral_containers_cannot_be_set_on_create(api: ApiService) -> None:
    doc = pod_doc()
    doc["spec"]["ephemeralContainers"] = [debugger()]
    assert causes(rejected(api, doc)) == [
        "spec.ephemeralContainers: Forbidden: cannot be set on create"
    ]


def test_a_pod_template_may_not_hold_ephemeral_containers(api: ApiService) -> None:
    doc = deployment_doc()
    doc["spec"]["template"]["spec"]["ephemeralContainers"] = [debugger()]
    assert causes(rejected(api, doc)) == [
        "spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed "
        "in pod template"
    ]


def test_a_main_update_may_not_add_ephemeral_containers(api: ApiService, pod: Pod) -> None:
    """``ValidatePodUpdate`` does not munge them: the pod-spec diff error."""
    [cause] = refused(api, debugger(), subresource="")
    assert cause.startswith(
        "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`"
    )
    assert "\n+ \tEphemeralContainers: [{" in cause


def test_a_main_update_keeps_existing_ephemeral_containers(api: ApiService, pod: Pod) -> None:
    """``kubectl edit``/``apply`` of a debugged pod sends them back unchanged: allowed."""
    add(api, debugger())
    current = api.get(Pod, "p", "default")
    doc = copy.deepcopy(to_dict(current))
    doc["spec"]["containers"][0]["image"] = "nginx:1.28"
    stored = api.update_object(manifest.decode_request(doc)).obj
    assert stored.spec.containers[0].image == "nginx:1.28"
    assert [c.name for c in stored.spec.ephemeral_containers] == ["debugger"]
