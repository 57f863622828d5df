"""The garbage-collection finalizers a delete puts on its object (``api.gcpolicy``).

Upstream: ``shouldOrphanDependents``, ``shouldDeleteDependents`` and
``deletionFinalizersForGarbageCollection`` in
``staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go``; the default
policies of ``pkg/registry/core/replicationcontroller/strategy.go`` and
``pkg/registry/batch/job/strategy.go`` (``DefaultGarbageCollectionPolicy``).
"""

from __future__ import annotations

import pytest

from kubeprio.api import gcpolicy

POLICY_CASES = [
    # (requested, finalizers already there, default, effective policy)
    ("Orphan", (), "Background", "Orphan"),
    ("Foreground", ("orphan",), "Background", "Foreground"),
    ("Background", ("foregroundDeletion",), "Orphan", "Background"),
    (None, ("x", "foregroundDeletion"), "Orphan", "Foreground"),
    (None, ("orphan",), "Background", "Orphan"),
    (None, ("x",), "Orphan", "Orphan"),
    (None, (), "Background", "Background"),
]


@pytest.mark.parametrize(("requested", "finalizers", "default", "expected"), POLICY_CASES)
def test_request_then_finalizers_then_default_decide(
    requested: str | None, finalizers: tuple[str, ...], default: str, expected: str
) -> None:
    assert gcpolicy.effective_policy(requested, finalizers, default) == expected


FINALIZER_CASES = [
    # (finalizers, policy, finalizers after, or None when the set is unchanged)
    ((), "Orphan", ("orphan",)),
    ((), "Foreground", ("foregroundDeletion",)),
    ((), "Background", None),
    (("a",), "Foreground", ("a", "foregroundDeletion")),
    (("orphan", "a"), "Foreground", ("a", "foregroundDeletion")),
    (("foregroundDeletion", "a"), "Background", ("a",)),
    (("a", "orphan"), "Orphan", None),
]


@pytest.mark.parametrize(("finalizers", "policy", "expected"), FINALIZER_CASES)
def test_the_gc_finalizers_are_replaced_as_the_policy_says(
    finalizers: tuple[str, ...], policy: str, expected: tuple[str, ...] | None
) -> None:
    assert gcpolicy.finalizers_after_delete(finalizers, policy) == expected


@pytest.mark.parametrize(
    ("group", "version", "kind", "expected"),
    [
        ("", "v1", "ReplicationController", "Orphan"),
        ("batch", "v1", "Job", "Orphan"),
        ("apps", "v1", "ReplicaSet", "Background"),
        ("apps", "v1", "Deployment", "Background"),
        ("", "v1", "Pod", "Background"),
    ],
)
def test_rc_and_batch_v1_jobs_orphan_by_default(
    group: str, version: str, kind: str, expected: str
) -> None:
    assert gcpolicy.default_policy(group, version, kind) == expected
