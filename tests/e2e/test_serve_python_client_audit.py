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

from kubeprio.api.kinds import RESOURCES, ResourceInfo
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
    import base64

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
    "ReplicationController": {"spec": {"replicas": 0, "selector": {"app": "a"}, "template": _TEMPLATE}},
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
                        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"],
                         "namespaces": ["*"]}
                    ],
                }
            ],
        }
    },  # fmt: skip
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
                    {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"],
                     "resources": ["deployments"]}
                ]
            },
            "validations": [{"expression": "true"}],
        }
    },  # fmt: skip
    "ValidatingAdmissionPolicyBinding": {"spec": {"policyName": "p", "validationActions": ["Deny"]}},
    "MutatingWebhookConfiguration": {"webhooks": []},
    "ValidatingWebhookConfiguration": {"webhooks": []},
    "CustomResourceDefinition": {
        "spec": {
            "group": "audit.example.com",
            "names": {"plural": "audits", "singular": "audit", "kind": "Audit"},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": True, "storage": True,
                 "schema": {"openAPIV3Schema": {"type": "object"}}}
            ],
        }
    },  # fmt: skip
}
"""A minimal valid body of each kind (metadata added by ``_body``)."""

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
        **BODIES[info.kind],
    }


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
    """Every row of ``api.kinds.RESOURCES`` has a body here, or a reason it has none."""
    kinds = {info.kind for info in RESOURCES}
    assert kinds == set(BODIES) | set(NOT_IN_THE_CLIENT)


@pytest.mark.parametrize(
    "info", [i for i in RESOURCES if i.kind in BODIES], ids=lambda i: i.kind
)
def test_typed_crud_of_every_kind(api: k8s.ApiClient, info: ResourceInfo) -> None:
    """Create/read/list/replace/patch/status/scale/delete through the typed API decode
    into the client's models (``endpoints/handlers``: 201 with the object on create, the
    object on get/update/patch, the list on list)."""
    typed = Typed(info, getattr(k8s, API_CLASSES[info.group])(api))
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
        assert isinstance(deleted, dict) and deleted["metadata"]["name"] == name
    if "deletecollection" in info.verbs:
        # Answered with the list of what was deleted (store.DeleteCollection).
        typed.api.api_client  # the collection call below must decode, whatever it holds
        getattr(
            typed.api,
            f"delete_collection_{'namespaced_' if info.namespaced else ''}{_snake(info.kind)}",
        )(*typed.args, label_selector="audit=yes")


def _gone(typed: Typed, name: str) -> bool:
    try:
        typed.verb("read")(name, *typed.args)
    except k8s.ApiException as exc:
        return exc.status == 404
    return False
