"""Pure StatefulSet rules (``stateful_set_utils.go``, ``history.HashControllerRevision``)."""

from __future__ import annotations

import pytest

from kubeprio.api.core import Pod
from kubeprio.api.meta import ObjectMeta
from kubeprio.controllers import statefulsetutil


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("web-0", ("web", 0)),
        ("my-app-12", ("my-app", 12)),
        ("web", ("", -1)),
        ("web-x", ("", -1)),
        ("web-2147483648", ("web", -1)),
    ],
    ids=["simple", "dashes in the set name", "no ordinal", "not a number", "beyond int32"],
)
def test_parent_and_ordinal(name: str, expected: tuple[str, int]) -> None:
    """``getParentNameAndOrdinal``: ``(.*)-([0-9]+)$``, the ordinal parsed as int32."""
    assert statefulsetutil.parent_and_ordinal(Pod(metadata=ObjectMeta(name=name))) == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [(b"", 0x811C9DC5), (b"a", 0x050C5D7E), (b"foobar", 0x31F0B262)],
    ids=["empty", "a", "foobar"],
)
def test_fnv1_32_known_vectors(data: bytes, expected: int) -> None:
    """``hash/fnv.New32`` is FNV-1 (multiply, then xor), not FNV-1a."""
    assert statefulsetutil._fnv1_32(data) == expected


def test_revision_hash_counts_the_probe_as_decimal_text() -> None:
    """``HashControllerRevision`` writes the collision count with ``strconv.FormatInt``."""
    data = {"spec": {"template": {"$patch": "replace"}}}
    raw = b'{"spec":{"template":{"$patch":"replace"}}}'
    assert statefulsetutil.data_bytes(data) == raw
    expected = statefulsetutil.deploymentutil.safe_encode(
        str(statefulsetutil._fnv1_32(raw + b"12"))
    )
    assert statefulsetutil.revision_hash(data, 12) == expected
    assert statefulsetutil.revision_hash(data, 0) != statefulsetutil.revision_hash(data, 1)
