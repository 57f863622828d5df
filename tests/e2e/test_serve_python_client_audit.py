"""The official ``kubernetes`` Python client's typed APIs, kind by kind, against ``kubeprio serve``.

The typed APIs deserialise every answer into generated models (pydantic since v37): a
required field missing from a response, a Status where the model expects the object, or a
wrong content type breaks them. One table row per kind kubeprio serves drives create,
read, list (namespaced and ``_for_all_namespaces``), replace, patch (a dict body: the
client sends ``application/strategic-merge-patch+json``; a list body: ``json-patch+json``,
``kubernetes/client/rest.py``), the ``status`` and ``scale`` subresources, delete (the
object or a Status, as upstream's store's ``ReturnDeletedObject``), delete-collection and
the 404 after. Other tests cover the subresources (binding, eviction with the PDB's 429,
logs, service-account tokens, the reviews), watch resume, ``DynamicClient``,
``utils.create_from_yaml`` and error bodies (404, 409 AlreadyExists and Conflict, 422
with causes, 403).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kubernetes import client as k8s
from kubernetes import dynamic as k8s_dynamic
from kubernetes import utils as k8s_utils
from kubernetes import watch as k8s_watch

from kubeprio.api.kinds import ALTERNATE_VERSIONS, RESOURCES, ResourceInfo
from tests.e2e.serving import CLIENT_SOCKET_WARNINGS, ServeProcess, eventually, running

pytestmark = [pytest.mark.e2e, *CLIENT_SOCKET_WARNINGS]

NS: Final = "audit"
EXAMPLES: Final = Path(__file__).resolve().parents[2] / "examples"

API_CLASSES: Final = {
    "": "CoreV1Api",
    "apps": "AppsV1Api",
    "batch": "BatchV1Api",
    "policy": "PolicyV1Api",
    "scheduling.k8s.io": "SchedulingV1Api",
    "coordination.k8s.io": "CoordinationV1Api",
    "storage.k8s.io": "StorageV1Api",
    "node.k8s.io": "NodeV1Api",
    "networking.k8s.io": "NetworkingV1Api",
    "discovery.k8s.io": "DiscoveryV1Api",
    "certificates.k8s.io": "CertificatesV1Api",
    "rbac.authorization.k8s.io": "RbacAuthorizationV1Api",
    "flowcontrol.apiserver.k8s.io": "FlowcontrolApiserverV1Api",
    "admissionregistration.k8s.io": "AdmissionregistrationV1Api",
    "apiextensions.k8s.io": "ApiextensionsV1Api",
    "apiregistration.k8s.io": "ApiregistrationV1Api",
    "autoscaling": "AutoscalingV2Api",
}
"""The client's API class of each group (at the version kubeprio stores)."""

ALTERNATE_API_CLASSES: Final = {
    "autoscaling/v1": "AutoscalingV1Api",
    "events.k8s.io/v1": "EventsV1Api",
}
"""The client's API class of each version served by conversion (``kinds.ALTERNATE_VERSIONS``)."""

NOT_IN_THE_CLIENT: Final = {"Tenant": "kubeprio.io is kubeprio's own group"}

RETURNS_DELETED_OBJECT: Final = {
    "Pod",
    "Service",
    "PodTemplate",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "ResourceQuota",
    "ServiceAccount",
    "StorageClass",
    "CSIDriver",
    "CSINode",
    "VolumeAttachment",
}
"""Upstream stores with ``ReturnDeletedObject: true`` (``pkg/registry/core/*/storage`` and
``pkg/registry/storage/*/storage``); the client's ``delete_*`` of these is typed as the
kind, of every other kind as ``object`` (a Status)."""

_POD: Final = {"containers": [{"name": "c", "image": "nginx"}]}
_TEMPLATE: Final = {"metadata": {"labels": {"app": "a"}}, "spec": _POD}
_SELECTOR: Final = {"matchLabels": {"app": "a"}}
_JOB_POD: Final = {"spec": {**_POD, "restartPolicy": "Never"}}
_BINDING: Final = {
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
    "subjects": [{"kind": "User", "name": "u", "apiGroup": "rbac.authorization.k8s.io"}],
}
_RULES: Final = {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]}


def _csr_request() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    request = (
        x509.CertificateSigningRequestBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "audit")]))
        .sign(key, hashes.SHA256())
    )
    return base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode()


BODIES: Final[dict[str, dict[str, Any]]] = {
    "Namespace": {},
    "Node": {},
    "Pod": {"spec": _POD},
    "Event": {
        "involvedObject": {"kind": "Pod", "name": "x", "namespace": NS},
        "reason": "Audit",
        "message": "m",
        "type": "Normal",
    },
    "PodTemplate": {"template": _TEMPLATE},
    "Service": {"spec": {"ports": [{"port": 80}]}},
    "Endpoints": {
        "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}],
    },
    "ResourceQuota": {"spec": {"hard": {"configmaps": "100"}}},
    "LimitRange": {"spec": {"limits": [{"type": "Container", "default": {"cpu": "100m"}}]}},
    "PersistentVolume": {
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/tmp/audit"},
        }
    },
    "PersistentVolumeClaim": {
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "none",
        }
    },
    "ReplicationController": {
        "spec": {"replicas": 0, "selector": {"app": "a"}, "template": _TEMPLATE}
    },
    "ConfigMap": {"data": {"a": "b"}},
    "Secret": {"stringData": {"a": "b"}},
    "ServiceAccount": {},
    "APIService": {
        "spec": {
            "group": "audit.example.com",
            "version": "v1",
            "groupPriorityMinimum": 100,
            "versionPriority": 10,
            "service": {"name": "s", "namespace": "default"},
        }
    },
    "PriorityClass": {"value": 5},
    "PodDisruptionBudget": {"spec": {"minAvailable": 1, "selector": _SELECTOR}},
    "ControllerRevision": {"revision": 1, "data": {}},
    "DaemonSet": {"spec": {"selector": _SELECTOR, "template": _TEMPLATE}},
    "Deployment": {"spec": {"replicas": 0, "selector": _SELECTOR, "template": _TEMPLATE}},
    "ReplicaSet": {"spec": {"replicas": 0, "selector": _SELECTOR, "template": _TEMPLATE}},
    "StatefulSet": {
        "spec": {"replicas": 0, "serviceName": "s", "selector": _SELECTOR, "template": _TEMPLATE}
    },
    "HorizontalPodAutoscaler": {
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
            "minReplicas": 1,
            "maxReplicas": 3,
        }
    },
    "CronJob": {
        "spec": {
            "schedule": "*/5 * * * *",
            "suspend": True,
            "jobTemplate": {"spec": {"template": _JOB_POD}},
        }
    },
    "Job": {"spec": {"suspend": True, "template": _JOB_POD}},
    "Lease": {"spec": {"holderIdentity": "h"}},
    "StorageClass": {"provisioner": "example.com/audit"},
    "CSIDriver": {"spec": {}},
    "CSINode": {"spec": {"drivers": []}},
    "CSIStorageCapacity": {"storageClassName": "sc"},
    "VolumeAttachment": {
        "spec": {
            "attacher": "audit.example.com",
            "nodeName": "node-1",
            "source": {"persistentVolumeName": "pv"},
        }
    },
    "RuntimeClass": {"handler": "runc"},
    "IngressClass": {"spec": {"controller": "example.com/audit"}},
    "Ingress": {"spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}},
    "NetworkPolicy": {"spec": {"podSelector": {}}},
    "EndpointSlice": {"addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"]}]},
    "CertificateSigningRequest": {
        "spec": {
            "request": _csr_request(),
            "signerName": "example.com/audit",
            "usages": ["client auth"],
        }
    },
    "ClusterRoleBinding": _BINDING,
    "ClusterRole": _RULES,
    "RoleBinding": _BINDING,
    "Role": _RULES,
    "FlowSchema": {
        "spec": {
            "priorityLevelConfiguration": {"name": "global-default"},
            "matchingPrecedence": 5000,
            "rules": [
                {
                    "subjects": [{"kind": "User", "user": {"name": "u"}}],
                    "resourceRules": [
                        {
                            "verbs": ["get"],
                            "apiGroups": [""],
                            "resources": ["pods"],
                            "namespaces": ["*"],
                        }
                    ],
                }
            ],
        }
    },
    "PriorityLevelConfiguration": {
        "spec": {
            "type": "Limited",
            "limited": {"nominalConcurrencyShares": 5, "limitResponse": {"type": "Reject"}},
        }
    },
    "ValidatingAdmissionPolicy": {
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["apps"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["deployments"],
                    }
                ]
            },
            "validations": [{"expression": "true"}],
        }
    },
    "ValidatingAdmissionPolicyBinding": {
        "spec": {"policyName": "p", "validationActions": ["Deny"]}
    },
    "MutatingWebhookConfiguration": {"webhooks": []},
    "ValidatingWebhookConfiguration": {"webhooks": []},
    "CustomResourceDefinition": {
        "spec": {
            "group": "audit.example.com",
            "names": {"plural": "audits", "singular": "audit", "kind": "Audit"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object"}},
                }
            ],
        }
    },
}
"""A minimal valid body of each kind (metadata added by ``_body``)."""

ALTERNATE_BODIES: Final[dict[str, dict[str, Any]]] = {
    "autoscaling/v1": {
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
            "minReplicas": 1,
            "maxReplicas": 3,
            "targetCPUUtilizationPercentage": 50,
        }
    },
    "events.k8s.io/v1": {
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "example.com/audit",
        "reportingInstance": "audit-1",
        "action": "Audit",
        "reason": "Audit",
        "type": "Normal",
        "regarding": {"kind": "Pod", "name": "x", "namespace": NS},
    },
}
"""Bodies of the versions served by conversion, whose shapes differ from the stored one."""

SPECIAL_NAMES: Final = {
    "APIService": "v1.audit.example.com",
    "CustomResourceDefinition": "audits.audit.example.com",
}


def _snake(kind: str) -> str:
    """The client's method suffix for a kind (``CSIDriver`` -> ``csi_driver``)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", kind).lower()


@dataclass(frozen=True)
class Typed:
    """One kind's typed API: ``verb("create")`` is ``create_namespaced_pod`` and so on."""

    info: ResourceInfo
    api: Any

    @property
    def args(self) -> tuple[str, ...]:
        return (NS,) if self.info.namespaced else ()

    def verb(self, verb: str, suffix: str = "") -> Any:
        scope = "namespaced_" if self.info.namespaced else ""
        return getattr(self.api, f"{verb}_{scope}{_snake(self.info.kind)}{suffix}")


def _name(kind: str) -> str:
    return SPECIAL_NAMES.get(kind, f"audit-{kind.lower()}")


def _body(info: ResourceInfo) -> dict[str, Any]:
    return {
        "apiVersion": info.api_version,
        "kind": info.kind,
        "metadata": {"name": _name(info.kind), "labels": {"audit": "yes"}},
        **ALTERNATE_BODIES.get(info.api_version, BODIES[info.kind]),
    }


def _typed(api: k8s.ApiClient, info: ResourceInfo) -> Typed:
    name = ALTERNATE_API_CLASSES.get(info.api_version) if info.storage_version else None
    return Typed(info, getattr(k8s, name or API_CLASSES[info.group])(api))


CRUD_ROWS: Final = [
    *(i for i in RESOURCES if i.kind in BODIES),
    *ALTERNATE_VERSIONS,
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with running(tmp_path_factory, "serve-pyaudit", ["--nodes", "1"]) as process:
        process.ok("create", "namespace", NS)
        yield process


@pytest.fixture(scope="module")
def api(server: ServeProcess) -> Iterator[k8s.ApiClient]:
    with server.client() as client:
        yield client


def test_the_table_covers_every_stored_kind() -> None:
    """Every row of ``api.kinds.RESOURCES`` has a body here, or a reason it has none, and
    every version served by conversion has its client API class and body."""
    kinds = {info.kind for info in RESOURCES}
    assert kinds == set(BODIES) | set(NOT_IN_THE_CLIENT)
    alternates = {info.api_version for info in ALTERNATE_VERSIONS}
    assert alternates == set(ALTERNATE_API_CLASSES) == set(ALTERNATE_BODIES)


@pytest.mark.parametrize("info", CRUD_ROWS, ids=lambda i: f"{i.kind}@{i.api_version}")
def test_typed_crud_of_every_kind(api: k8s.ApiClient, info: ResourceInfo) -> None:
    """Create/read/list/replace/patch/status/scale/delete through the typed API decode
    into the client's models (``endpoints/handlers``: 201 with the object on create, the
    object on get/update/patch, the list on list)."""
    typed = _typed(api, info)
    name = _name(info.kind)
    created = typed.verb("create")(*typed.args, _body(info))
    assert (created.metadata.name, created.kind, created.api_version) == (
        name,
        info.kind,
        info.api_version,
    )
    read = typed.verb("read")(name, *typed.args)
    assert read.metadata.uid == created.metadata.uid
    listed = typed.verb("list")(*typed.args, label_selector="audit=yes")
    assert [item.metadata.name for item in listed.items] == [name]
    if info.namespaced:
        everywhere = getattr(typed.api, f"list_{_snake(info.kind)}_for_all_namespaces")(
            label_selector="audit=yes"
        )
        assert [item.metadata.name for item in everywhere.items] == [name]
    read.metadata.labels = {"audit": "yes", "replaced": "1"}
    # Unconditional (no resourceVersion; every built-in strategy's AllowUnconditionalUpdate
    # is true): a controller's write since the read cannot turn it into a Conflict.
    read.metadata.resource_version = None
    replaced = typed.verb("replace")(name, *typed.args, read)
    assert replaced.metadata.labels["replaced"] == "1"
    # A dict body goes as a strategic merge patch, a list as a JSON patch (client rest.py).
    merged = typed.verb("patch")(name, *typed.args, {"metadata": {"labels": {"merged": "1"}}})
    expected = {"audit": "yes", "replaced": "1", "merged": "1"}
    assert merged.metadata.labels.items() >= expected.items()
    operations = [{"op": "add", "path": "/metadata/labels/jsonpatched", "value": "1"}]
    patched = typed.verb("patch")(name, *typed.args, operations)
    assert patched.metadata.labels["jsonpatched"] == "1"
    if info.has_subresource("status"):
        status = typed.verb("read", "_status")(name, *typed.args)
        assert status.metadata.name == name
        # No resourceVersion: an unconditional update (every kind's strategy allows it),
        # so a controller's status write in between cannot make it a Conflict.
        status.metadata.resource_version = None
        assert typed.verb("replace", "_status")(name, *typed.args, status).metadata.name == name
        patch = {"metadata": {"annotations": {"status-patched": "1"}}}
        assert typed.verb("patch", "_status")(name, *typed.args, patch).metadata.name == name
    if info.has_subresource("scale"):
        scale = typed.verb("read", "_scale")(name, *typed.args)
        # ScaleSpec.replicas is omitempty in Go: zero replicas are left out.
        assert (scale.kind, scale.spec.replicas) == ("Scale", None)
        scale.spec.replicas = 0
        assert typed.verb("replace", "_scale")(name, *typed.args, scale).metadata.name == name
        patched_scale = typed.verb("patch", "_scale")(name, *typed.args, {"spec": {"replicas": 0}})
        assert patched_scale.metadata.name == name
    deleted = typed.verb("delete")(name, *typed.args)
    if info.kind in RETURNS_DELETED_OBJECT:
        # ReturnDeletedObject: true: the kind itself, decoded by the typed method.
        assert (deleted.kind, deleted.metadata.name) == (info.kind, name)
    elif isinstance(deleted, dict) and deleted["kind"] == "Status":
        # genericregistry.Store.Delete without ReturnDeletedObject: a Success Status.
        assert (deleted["status"], deleted["details"]["name"]) == ("Success", name)
    else:
        # Still there (finalizers, graceful deletion): the object as it now is.
        assert isinstance(deleted, dict)
        assert deleted["metadata"]["name"] == name
    if "deletecollection" in info.verbs:
        # Answered with the list of what was deleted (genericregistry.Store.DeleteCollection
        # returns the list); the typed method decodes it as its declared V1Status.
        answer = getattr(
            typed.api,
            f"delete_collection_{'namespaced_' if info.namespaced else ''}{_snake(info.kind)}",
        )(*typed.args, label_selector="audit=yes")
        assert answer.kind == f"{info.kind}List"


def _raw(response: Any) -> Any:
    """The JSON of a ``_preload_content=False`` response."""
    return json.loads(response.data)


def _running_pod(core: k8s.CoreV1Api, name: str, labels: dict[str, str] | None = None) -> None:
    core.create_namespaced_pod(
        NS, {"metadata": {"name": name, "labels": labels or {}}, "spec": _POD}
    )
    eventually(lambda: core.read_namespaced_pod(name, NS).status.phase == "Running")


def test_binding_answers_a_success_status(api: k8s.ApiClient) -> None:
    """``pods/binding`` (``BindingREST.Create``, ``pkg/registry/core/pod/storage``) answers
    201 with a Success Status, not the Binding; the client's typed method declares
    V1Binding, so a caller reads the raw answer (as against a real cluster)."""
    core = k8s.CoreV1Api(api)
    core.create_namespaced_pod(
        NS, {"metadata": {"name": "unbound"}, "spec": {**_POD, "schedulerName": "nobody"}}
    )
    binding = k8s.V1Binding(
        metadata=k8s.V1ObjectMeta(name="unbound"),
        target=k8s.V1ObjectReference(kind="Node", name="node-1"),
    )
    response = core.create_namespaced_pod_binding("unbound", NS, binding, _preload_content=False)
    assert response.status == 201
    answer = _raw(response)
    assert (answer["kind"], answer["status"], answer["code"]) == ("Status", "Success", 201)
    assert core.read_namespaced_pod("unbound", NS).spec.node_name == "node-1"


def test_eviction_is_429_while_the_budget_forbids_it(api: k8s.ApiClient) -> None:
    """``pods/eviction`` (``pkg/registry/core/pod/storage/eviction.go``): 429 with the
    DisruptionBudget cause while the PDB allows no disruption, else 201 and the pod goes."""
    core = k8s.CoreV1Api(api)
    _running_pod(core, "guarded", {"evict": "me"})
    k8s.PolicyV1Api(api).create_namespaced_pod_disruption_budget(
        NS,
        {
            "metadata": {"name": "guard"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"evict": "me"}}},
        },
    )
    eviction = k8s.V1Eviction(metadata=k8s.V1ObjectMeta(name="guarded", namespace=NS))

    def refused() -> k8s.ApiException | None:
        try:
            core.create_namespaced_pod_eviction("guarded", NS, eviction)
        except k8s.ApiException as exc:
            return exc if exc.status == 429 else None
        raise AssertionError("the eviction went through the budget")

    caught = eventually(refused)
    body = json.loads(caught.body)
    assert body["reason"] == "TooManyRequests"
    assert body["message"] == ("Cannot evict pod as it would violate the pod's disruption budget.")
    assert body["details"]["causes"] == [
        {
            "reason": "DisruptionBudget",
            "message": "The disruption budget guard needs 1 healthy pods and has 1 currently",
        }
    ]
    k8s.PolicyV1Api(api).delete_namespaced_pod_disruption_budget("guard", NS)
    response = core.create_namespaced_pod_eviction("guarded", NS, eviction, _preload_content=False)
    assert response.status == 201
    assert _raw(response)["status"] == "Success"


def test_scale_subresources_move_the_replicas(api: k8s.ApiClient) -> None:
    """``deployments/scale``, ``replicasets/scale``, ``statefulsets/scale`` answer
    autoscaling/v1 Scale (``pkg/registry/apps/*/storage``): replace and patch change
    ``spec.replicas``; ``status.selector`` is the label selector's string form."""
    apps = k8s.AppsV1Api(api)
    for kind in ("Deployment", "ReplicaSet", "StatefulSet"):
        info = next(i for i in RESOURCES if i.kind == kind)
        typed = Typed(info, apps)
        name = f"scaled-{kind.lower()}"
        body = _body(info)
        body["metadata"] = {"name": name}
        typed.verb("create")(NS, body)
        scale = typed.verb("read", "_scale")(name, NS)
        assert scale.status.selector == "app=a"
        scale.spec.replicas = 2
        assert typed.verb("replace", "_scale")(name, NS, scale).spec.replicas == 2
        patched = typed.verb("patch", "_scale")(name, NS, {"spec": {"replicas": 1}})
        assert patched.spec.replicas == 1
        assert typed.verb("read")(name, NS).spec.replicas == 1
        typed.verb("delete")(name, NS)


def test_logs_tokens_and_reviews(api: k8s.ApiClient) -> None:
    """``pods/log`` is text/plain (``read_namespaced_pod_log`` returns str);
    ``serviceaccounts/token`` answers a TokenRequest whose token TokenReview accepts
    (``pkg/registry/core/serviceaccount/storage/token.go``, ``tokenreview``)."""
    core = k8s.CoreV1Api(api)
    _running_pod(core, "logger")
    assert isinstance(core.read_namespaced_pod_log("logger", NS), str)
    core.create_namespaced_service_account(NS, {"metadata": {"name": "robot"}})
    request = k8s.AuthenticationV1TokenRequest(
        spec=k8s.V1TokenRequestSpec(audiences=["https://kubernetes.default.svc.cluster.local"])
    )
    issued = core.create_namespaced_service_account_token("robot", NS, request)
    assert issued.status.token
    assert issued.status.expiration_timestamp
    review = k8s.AuthenticationV1Api(api).create_token_review(
        k8s.V1TokenReview(spec=k8s.V1TokenReviewSpec(token=issued.status.token))
    )
    assert review.status.authenticated is True
    assert review.status.user.username == f"system:serviceaccount:{NS}:robot"
    access = k8s.AuthorizationV1Api(api).create_self_subject_access_review(
        k8s.V1SelfSubjectAccessReview(
            spec=k8s.V1SelfSubjectAccessReviewSpec(
                resource_attributes=k8s.V1ResourceAttributes(verb="delete", resource="nodes")
            )
        )
    )
    assert access.status.allowed is True


def test_watch_streams_and_resumes_from_a_resource_version(api: k8s.ApiClient) -> None:
    """``Watch().stream`` decodes each event into the model; started at a list's
    resourceVersion it sees only what came after (``watch.go``: events newer than RV)."""
    core = k8s.CoreV1Api(api)
    listed = core.list_namespaced_config_map(NS, label_selector="watched=yes")
    start = listed.metadata.resource_version
    for index in range(3):
        core.create_namespaced_config_map(
            NS, {"metadata": {"name": f"watched-{index}", "labels": {"watched": "yes"}}}
        )
    watcher = k8s_watch.Watch()
    seen: list[tuple[str, str, str]] = []
    for event in watcher.stream(
        core.list_namespaced_config_map,
        NS,
        label_selector="watched=yes",
        resource_version=start,
        timeout_seconds=5,
    ):
        obj = event["object"]
        assert isinstance(obj, k8s.V1ConfigMap)
        seen.append((event["type"], obj.metadata.name, obj.metadata.resource_version))
        if len(seen) == 3:
            watcher.stop()
    assert [(kind, name) for kind, name, _ in seen] == [
        ("ADDED", f"watched-{index}") for index in range(3)
    ]
    resumed = k8s_watch.Watch()
    names = []
    for event in resumed.stream(
        core.list_namespaced_config_map,
        NS,
        label_selector="watched=yes",
        resource_version=seen[0][2],
        timeout_seconds=5,
    ):
        names.append(event["object"].metadata.name)
        if len(names) == 2:
            resumed.stop()
    assert names == ["watched-1", "watched-2"]


def test_error_bodies_are_upstream_statuses(server: ServeProcess, api: k8s.ApiClient) -> None:
    """404 NotFound, 409 AlreadyExists and Conflict, 422 Invalid with causes, 403 Forbidden
    (``k8s.io/apimachinery/pkg/api/errors``): the ApiException carries the Status."""
    core = k8s.CoreV1Api(api)

    def failure(call: Any, *args: Any) -> tuple[int, dict[str, Any]]:
        with pytest.raises(k8s.ApiException) as caught:
            call(*args)
        assert caught.value.headers["content-type"] == "application/json"
        return caught.value.status, json.loads(caught.value.body)

    code, body = failure(core.read_namespaced_config_map, "missing", NS)
    assert (code, body["reason"], body["message"]) == (
        404,
        "NotFound",
        'configmaps "missing" not found',
    )
    assert body["details"] == {"name": "missing", "kind": "configmaps"}
    core.create_namespaced_config_map(NS, {"metadata": {"name": "twice"}})
    code, body = failure(core.create_namespaced_config_map, NS, {"metadata": {"name": "twice"}})
    assert (code, body["reason"], body["message"]) == (
        409,
        "AlreadyExists",
        'configmaps "twice" already exists',
    )
    stale = core.read_namespaced_config_map("twice", NS)
    core.patch_namespaced_config_map("twice", NS, {"data": {"a": "1"}})
    code, body = failure(core.replace_namespaced_config_map, "twice", NS, stale)
    assert (code, body["reason"]) == (409, "Conflict")
    assert body["message"] == (
        'Operation cannot be fulfilled on configmaps "twice": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    code, body = failure(core.create_namespaced_config_map, NS, {"metadata": {"name": "Not_Valid"}})
    assert (code, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"][0]["field"] == "metadata.name"
    assert body["message"].startswith('ConfigMap "Not_Valid" is invalid: metadata.name: ')
    core.create_namespaced_service_account(NS, {"metadata": {"name": "nobody"}})
    token = core.create_namespaced_service_account_token(
        "nobody", NS, k8s.AuthenticationV1TokenRequest(spec=k8s.V1TokenRequestSpec(audiences=[]))
    ).status.token
    configuration = k8s.Configuration()
    configuration.host = server.url
    configuration.ssl_ca_cert = str(server.data_dir / "pki" / "ca.crt")
    configuration.api_key = {"authorization": f"Bearer {token}"}
    with k8s.ApiClient(configuration) as nobody:
        code, body = failure(k8s.CoreV1Api(nobody).list_node)
    assert (code, body["reason"]) == (403, "Forbidden")
    assert body["message"] == (
        f'nodes is forbidden: User "system:serviceaccount:{NS}:nobody" cannot list resource '
        '"nodes" in API group "" at the cluster scope'
    )
    assert body["details"] == {"kind": "nodes"}


def test_the_dynamic_client(api: k8s.ApiClient) -> None:
    """``DynamicClient`` builds its resource map from discovery (/api, /apis and each
    group version's APIResourceList) and drives get/create/patch/delete/watch with it."""
    dynamic = k8s_dynamic.DynamicClient(api)
    deployments = dynamic.resources.get(api_version="apps/v1", kind="Deployment")
    assert (deployments.namespaced, deployments.name) == (True, "deployments")
    info = next(i for i in RESOURCES if i.kind == "Deployment")
    body = _body(info)
    body["metadata"] = {"name": "dynamic", "namespace": NS}
    created = deployments.create(body=body, namespace=NS)
    assert created.metadata.name == "dynamic"
    patched = deployments.patch(
        name="dynamic",
        namespace=NS,
        body={"metadata": {"labels": {"patched": "1"}}},
        content_type="application/merge-patch+json",
    )
    assert patched.metadata.labels["patched"] == "1"
    assert [d.metadata.name for d in deployments.get(namespace=NS).items] == ["dynamic"]
    events = []
    for event in deployments.watch(namespace=NS, name="dynamic", timeout=2):
        events.append(event["type"])
        break
    assert events == ["ADDED"]
    scale = dynamic.resources.get(api_version="apps/v1", kind="Deployment").subresources["scale"]
    assert scale.kind == "Scale"
    deleted = deployments.delete(name="dynamic", namespace=NS)
    assert deleted.kind == "Status"
    priority = dynamic.resources.get(api_version="scheduling.k8s.io/v1", kind="PriorityClass")
    assert not priority.namespaced


def test_create_from_yaml_on_the_examples(api: k8s.ApiClient) -> None:
    """``utils.create_from_yaml`` (typed APIs picked from each document's apiVersion/kind)
    creates the kestrel example's priority classes, namespaces and workloads."""
    created = []
    for name in ("00-priorityclasses.yaml", "01-namespaces.yaml", "03-workloads.yaml"):
        for objects in k8s_utils.create_from_yaml(api, str(EXAMPLES / "kestrel" / name)):
            created.extend(objects)
    kinds = sorted({type(obj).__name__ for obj in created})
    assert kinds == [
        "V1Deployment",
        "V1Job",
        "V1Namespace",
        "V1Pod",
        "V1PodDisruptionBudget",
        "V1PriorityClass",
    ]


GADGETS: Final = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gadgets.audit.example.com"},
    "spec": {
        "group": "audit.example.com",
        "names": {"plural": "gadgets", "kind": "Gadget"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}
"""A CRD written as users write them: no ``singular``, no ``listKind`` (v1 defaults them)."""


def test_custom_objects_and_the_dynamic_clients_discovery_refresh(api: k8s.ApiClient) -> None:
    """A CRD's defaults (``apiextensions/v1/defaults.go``: singular, listKind, conversion);
    ``CustomObjectsApi`` (merge patch by default); a ``DynamicClient`` built before the CRD
    finds the new kind by refreshing discovery; a strategic merge patch of a custom object
    is 415 (``patchhandler``: custom resources accept json, merge and apply patches)."""
    dynamic = k8s_dynamic.DynamicClient(api)
    extensions = k8s.ApiextensionsV1Api(api)
    crd = extensions.create_custom_resource_definition(GADGETS)
    assert (crd.spec.names.singular, crd.spec.names.list_kind) == ("gadget", "GadgetList")
    assert crd.spec.conversion.strategy == "None"

    def established() -> bool:
        status = extensions.read_custom_resource_definition_status(crd.metadata.name).status
        return any(c.type == "Established" and c.status == "True" for c in status.conditions or ())

    eventually(established)
    custom = k8s.CustomObjectsApi(api)
    group, version, plural = "audit.example.com", "v1", "gadgets"
    body = {"apiVersion": f"{group}/{version}", "kind": "Gadget", "metadata": {"name": "g"}}
    created = custom.create_namespaced_custom_object(
        group, version, NS, plural, {**body, "spec": {"size": 1}}
    )
    assert created["metadata"]["generation"] == 1
    patched = custom.patch_namespaced_custom_object(
        group, version, NS, plural, "g", {"spec": {"size": 2}}
    )
    assert patched["spec"] == {"size": 2}
    status = custom.patch_namespaced_custom_object_status(
        group, version, NS, plural, "g", {"status": {"ready": True}}
    )
    assert (status["status"], status["spec"]) == ({"ready": True}, {"size": 2})
    listed = custom.list_namespaced_custom_object(group, version, NS, plural)
    assert (listed["kind"], [i["metadata"]["name"] for i in listed["items"]]) == (
        "GadgetList",
        ["g"],
    )
    gadgets = dynamic.resources.get(api_version=f"{group}/{version}", kind="Gadget")
    assert gadgets.get(name="g", namespace=NS).spec.size == 2
    with pytest.raises(k8s.ApiException) as caught:
        gadgets.patch(name="g", namespace=NS, body={"spec": {"size": 3}})  # strategic merge
    assert caught.value.status == 415
    unsupported = json.loads(caught.value.body)
    assert unsupported["reason"] == "UnsupportedMediaType"
    assert unsupported["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )
    deleted = custom.delete_namespaced_custom_object(group, version, NS, plural, "g")
    assert (deleted["kind"], deleted["status"]) == ("Status", "Success")
    extensions.delete_custom_resource_definition(crd.metadata.name)


def test_a_watch_from_compacted_history_is_a_410(tmp_path_factory: pytest.TempPathFactory) -> None:
    """With ``--etcd-compaction-interval`` (``etcd3/compact.go``: each tick compacts to the
    revision of the tick before), a watch from an older resourceVersion ends with a 410
    Expired ERROR event, which ``Watch().stream`` raises as ``ApiException(status=410)``;
    a relist's resourceVersion watches again."""
    with (
        running(tmp_path_factory, "serve-pyaudit-compact", ["--nodes", "0",
                                                            "--etcd-compaction-interval", "1s"])
        as process,
        process.client() as client,
    ):  # fmt: skip
        core = k8s.CoreV1Api(client)
        old = core.create_namespaced_config_map("default", {"metadata": {"name": "old"}})
        stale = old.metadata.resource_version

        def expired() -> k8s.ApiException | None:
            core.create_namespaced_config_map("default", {"metadata": {"generateName": "w-"}})
            try:
                for _ in k8s_watch.Watch().stream(
                    core.list_namespaced_config_map,
                    "default",
                    resource_version=stale,
                    timeout_seconds=1,
                ):
                    pass
            except k8s.ApiException as exc:
                return exc
            return None

        caught = eventually(expired, every=0.5)
        assert caught.status == 410
        assert caught.reason.startswith(f"Expired: too old resource version: {stale} (")
        fresh = core.list_namespaced_config_map("default").metadata.resource_version
        core.create_namespaced_config_map("default", {"metadata": {"name": "new"}})
        watcher = k8s_watch.Watch()
        events = []
        for event in watcher.stream(
            core.list_namespaced_config_map, "default", resource_version=fresh, timeout_seconds=5
        ):
            events.append((event["type"], event["object"].metadata.name))
            watcher.stop()
        assert events == [("ADDED", "new")]


def test_the_discovery_calls_of_the_typed_apis(api: k8s.ApiClient) -> None:
    """``VersionApi``, ``ApisApi``, ``CoreApi`` and each group's ``get_api_group`` (GET
    ``/apis/<group>/``, with the slash: kube-aggregator's ``AddAPIService`` registers
    ``groupPath+"/"`` too) and ``get_api_resources`` (``/apis/<group>/<version>/``)."""
    assert k8s.VersionApi(api).get_code().minor == "32"
    groups = {g.name for g in k8s.ApisApi(api).get_api_versions().groups}
    assert k8s.CoreApi(api).get_api_versions().versions == ["v1"]
    assert any(r.name == "pods" for r in k8s.CoreV1Api(api).get_api_resources().resources)
    for group, class_name in API_CLASSES.items():
        if not group:
            continue
        assert group in groups
        answer = getattr(k8s, re.sub(r"V\d+\w*Api$", "Api", class_name))(api).get_api_group()
        assert answer.name == group
        resources = getattr(k8s, class_name)(api).get_api_resources()
        assert resources.group_version == answer.preferred_version.group_version
