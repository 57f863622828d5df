"""Malformed input never changes the store (issue 2, "Done when").

A valid manifest is corrupted at a random place (a value replaced by a random JSON
value, a key removed, an unknown key added) and sent through the server's path:
decode (``api.manifest.decode_request``), default, admit, validate, store. The write
either succeeds or fails with a Kubernetes ``Status`` error; on failure the store's
revision and contents are exactly as before. No other exception may escape.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubeprio.admission.chain import AdmissionChain
from kubeprio.api import errors, manifest
from kubeprio.api.core import Pod
from kubeprio.api.scheduling import PriorityClass
from kubeprio.apiserver.service import ApiService
from kubeprio.store.memory import MemoryStore
from tests.conftest import ManualClock
from tests.manifests import deployment_doc, job_doc, pdb_doc

RICH_POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web",
        "namespace": "default",
        "labels": {"app": "web"},
        "annotations": {"a": "b"},
    },
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "nginx:1.27",
                "ports": [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}],
                "resources": {
                    "requests": {"cpu": "100m", "memory": "64Mi"},
                    "limits": {"cpu": "1"},
                },
                "env": [{"name": "A", "value": "1"}],
            }
        ],
        "initContainers": [{"name": "init", "image": "busybox", "restartPolicy": "Always"}],
        "nodeSelector": {"disk": "ssd"},
        "tolerations": [
            {"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}
        ],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                    ]
                }
            },
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 10,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": {"app": "web"}},
                            "topologyKey": "zone",
                        },
                    }
                ]
            },
        },
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ],
        "priorityClassName": "high",
        "preemptionPolicy": "Never",
        "overhead": {"cpu": "10m"},
        "terminationGracePeriodSeconds": 10,
    },
}
PRIORITY_CLASS: dict[str, Any] = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "high"},
    "value": 1000,
    "globalDefault": False,
    "preemptionPolicy": "PreemptLowerPriority",
    "description": "high",
}
VALID_DOCUMENTS = [RICH_POD, PRIORITY_CLASS, deployment_doc(), job_doc(), pdb_doc()]

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(
        ["", "-1", "1e3", "500m", "1Gi", "Always", "In", "NoSchedule", "kube-system", "a/b/c", "Ki"]
    ),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a member of ``value`` (dict keys and list indexes)."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            found.extend(_paths(item, (*prefix, position)))
    return found


@st.composite
def corrupted(draw: st.DrawFn) -> dict[str, Any]:
    doc = copy.deepcopy(draw(st.sampled_from(VALID_DOCUMENTS)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        parent: Any = doc
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        last = path[-1]
        if action == "replace":
            parent[last] = draw(json_values)
        elif action == "delete" and isinstance(parent, dict):
            del parent[last]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(json_values)
    return doc


def _fresh_api() -> ApiService:
    api = ApiService(
        MemoryStore(), clock=ManualClock(), rng=random.Random(7), admission=AdmissionChain()
    )
    api.create(manifest.decode_request(PRIORITY_CLASS))
    return api


def _attempt(write: Callable[[], object]) -> errors.StatusError | None:
    """Run ``write``; return its Status error, if any (any other exception propagates)."""
    try:
        write()
    except errors.StatusError as error:
        return error
    return None


def _contents(api: ApiService) -> list[Any]:
    return [api.list(kind).items for kind in (Pod, PriorityClass)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corrupted())
def test_malformed_input_never_changes_the_store(doc: dict[str, Any]) -> None:
    api = _fresh_api()
    before_revision = api.store.current_revision()
    before = _contents(api)
    failure = _attempt(lambda: api.create_object(manifest.decode_request(doc)))
    if failure is not None:
        assert failure.status.code in (400, 403, 404, 409, 422)
        assert failure.message
        assert api.store.current_revision() == before_revision
        assert _contents(api) == before


@st.composite
def merge_patches(draw: st.DrawFn) -> dict[str, Any]:
    """A merge patch that sets or removes a few members of a pod manifest."""
    patch: dict[str, Any] = {}
    for path in draw(st.lists(st.sampled_from(_paths(RICH_POD)), min_size=1, max_size=3)):
        target = patch
        for step in path[:-1]:
            if isinstance(step, int):
                break
            target = target.setdefault(step, {}) if isinstance(target.get(step, {}), dict) else {}
        else:
            if not isinstance(path[-1], int):
                target[path[-1]] = draw(json_values)
    return patch


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(merge_patches())
def test_malformed_patches_never_change_the_store(patch: dict[str, Any]) -> None:
    api = _fresh_api()
    pod_doc = copy.deepcopy(RICH_POD)
    api.create_object(manifest.decode_request(pod_doc))
    before_revision = api.store.current_revision()
    before = _contents(api)
    failure = _attempt(lambda: api.patch(Pod, "web", patch, namespace="default"))
    if failure is not None:
        assert failure.status.code in (400, 409, 415, 422)
        assert api.store.current_revision() == before_revision
        assert _contents(api) == before
