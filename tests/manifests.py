"""Manifest-shaped test input (what a user writes) and helpers to send it through the API.

Validation and defaulting are about what users type, so those tests start from JSON
documents, change one thing (``with_path``), decode them the way the API server does
(``api.manifest.decode_request``) and create them through ``ApiService``. Every failing
write is also checked not to have touched the store.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubeprio.api import errors, manifest
from kubeprio.apiserver.service import ApiService

JsonDict = dict[str, Any]


def pod_doc(name: str = "p", namespace: str = "default") -> JsonDict:
    """A minimal valid pod."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
    }


def template_doc(labels: dict[str, str] | None = None, restart: str | None = None) -> JsonDict:
    """A pod template for workloads."""
    spec: JsonDict = {"containers": [{"name": "c", "image": "nginx:1.27"}]}
    if restart is not None:
        spec["restartPolicy"] = restart
    return {"metadata": {"labels": labels if labels is not None else {"app": "web"}}, "spec": spec}


def deployment_doc(name: str = "d") -> JsonDict:
    """A minimal valid Deployment selecting ``app=web``."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template_doc()},
    }


def replica_set_doc(name: str = "rs") -> JsonDict:
    """A minimal valid ReplicaSet selecting ``app=web``."""
    doc = deployment_doc(name)
    doc["kind"] = "ReplicaSet"
    return doc


def job_doc(name: str = "j") -> JsonDict:
    """A minimal valid Job (restartPolicy Never, selector generated)."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"template": template_doc(labels={}, restart="Never")},
    }


def pdb_doc(name: str = "b") -> JsonDict:
    """A minimal valid PodDisruptionBudget."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }


def node_doc(name: str = "n1") -> JsonDict:
    """A minimal valid Node."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def with_path(doc: JsonDict, path: str, value: Any) -> JsonDict:
    """A copy of ``doc`` with the dotted ``path`` set (``spec.containers.0.image``)."""
    out = copy.deepcopy(doc)
    target: Any = out
    parts = path.split(".")
    for part in parts[:-1]:
        target = target[int(part)] if isinstance(target, list) else target.setdefault(part, {})
    last = parts[-1]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return out


def create(api: ApiService, doc: JsonDict) -> Any:
    """Decode ``doc`` like the API server and create it; return the stored object."""
    return api.create_object(manifest.decode_request(doc)).obj


def rejected(
    api: ApiService, doc: JsonDict, error: type[errors.StatusError] = errors.InvalidError
) -> errors.StatusError:
    """Create ``doc``, expect ``error``, and check that nothing was stored."""
    before = api.store.current_revision()
    with pytest.raises(error) as caught:
        create(api, doc)
    assert api.store.current_revision() == before
    return caught.value


def causes(error: errors.StatusError) -> list[str]:
    """The causes of a Status as ``field: message`` lines (how kubectl prints them)."""
    details = error.status.details
    return [f"{c.field}: {c.message}" for c in (details.causes or ()) if details] if details else []
