"""``fieldvalidation.check`` scans a body before it prunes one: the scan's verdict (any
unknown field?) must be the full walk's, or a body with an unknown field would pass
unpruned and without its warning (upstream's strict decoding, sigs.k8s.io/json, reports
every unknown field). A property test over pod bodies with keys added at any depth."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubeprio.apiserver import fieldvalidation

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "web", "labels": {"app": "web"}, "annotations": {"a": "b"}},
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "busybox",
                "ports": [{"containerPort": 80}],
                "resources": {"requests": {"cpu": "100m"}},
                "env": [{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}],
            }
        ],
        "tolerations": [{"key": "k", "operator": "Exists"}],
        "affinity": {"nodeAffinity": None},
        "volumes": [{"name": "v", "emptyDir": {}}],
    },
}

keys = st.sampled_from(["foo", "name", "image", "requests", "$patch", "containerPort", "x"])
values = st.one_of(st.none(), st.integers(), st.text(max_size=3), st.builds(dict), st.builds(list))


def _containers(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The nested objects of the body (at every depth) one could add a key to."""
    found: list[dict[str, Any]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            found.append(value)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(body)
    return found


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(min_value=0), keys, values), max_size=3),
    st.booleans(),
)
def test_the_scan_finds_an_unknown_field_exactly_when_the_walk_does(
    additions: list[tuple[int, str, Any]], patch: bool
) -> None:
    body = copy.deepcopy(POD)
    for where, key, value in additions:
        targets = _containers(body)
        # A copy each time: the same container added twice could end up inside itself.
        targets[where % len(targets)][key] = copy.deepcopy(value)
    before = copy.deepcopy(body)
    pruned, problems = fieldvalidation.check("Pod", body, patch=patch)
    walked: list[str] = []
    roots, types = fieldvalidation._table()
    expected = fieldvalidation._walk_object(body, roots["Pod"], "", types, walked, patch)
    assert problems == walked
    assert pruned == expected
    if not problems:
        assert pruned is body  # nothing to prune: the body itself, not a copy
    assert body == before  # the body is never changed


def test_an_unknown_field_deep_in_a_list_is_reported() -> None:
    body = copy.deepcopy(POD)
    body["spec"]["containers"][0]["env"][0]["valueFrom"]["fieldRef"]["typo"] = 1
    pruned, problems = fieldvalidation.check("Pod", body)
    assert problems == ['unknown field "spec.containers[0].env[0].valueFrom.fieldRef.typo"']
    assert "typo" not in pruned["spec"]["containers"][0]["env"][0]["valueFrom"]["fieldRef"]
